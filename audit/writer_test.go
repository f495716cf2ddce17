package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"golang.org/x/mod/sumdb/tlog"
)

// world is a JetStream with the state buckets and the audit streams. Its
// store's writes go to tap, which its writers read, as in a process
// (noTap: they read every message from the streams).
type world struct {
	b     *broker.Broker
	store *kvstate.Store
	tap   *Tap
	noTap bool
}

func newWorld(t testing.TB, b *broker.Broker) *world {
	t.Helper()
	ctx := context.Background()
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range StreamConfigs(1) {
		if _, err := b.JS.CreateOrUpdateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	tap := NewTap()
	store.SetTap(tap.Offer)
	return &world{b: b, store: store, tap: tap}
}

// runWriter runs a writer on its own connection until the test ends, or
// until the returned stop is called.
func (w *world) runWriter(t testing.TB, name string) (stop func()) {
	t.Helper()
	return w.runWriterKeeping(t, name, nil)
}

func (w *world) runWriterKeeping(t testing.TB, name string, retention func(domain.TenantID) time.Duration) (stop func()) {
	t.Helper()
	js, err := w.b.Connect(name)
	if err != nil {
		t.Fatal(err)
	}
	var tap *Tap
	if !w.noTap {
		tap = w.tap
	}
	wr, err := NewWriter(WriterConfig{JS: js, Log: NewLog(js), Tap: tap,
		ConfigTenants: func([]byte) []domain.TenantID { return []domain.TenantID{"acme", "beta"} }, Retention: retention})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = wr.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

func (w *world) grant(t testing.TB, tenant domain.TenantID, i int) domain.GrantID {
	t.Helper()
	id := domain.GrantID(fmt.Sprintf("grt_%s%020d", strings.ToUpper(string(tenant[:1])), i))
	g := &domain.Grant{ID: id, Tenant: tenant, Agent: "a", Capability: domain.Capability{Action: "tools.call", Target: "x"},
		Effect: "allow", Scope: "always", CreatedBy: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, CreatedAt: time.Now()}
	if _, err := w.store.PutGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return id
}

// export reads tenant's whole log through a fresh Log.
func (w *world) export(t testing.TB, tenant domain.TenantID) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := NewLog(w.b.JS).Entries(context.Background(), tenant, 0, time.Time{}, func(line []byte) error {
		buf.Write(line)
		buf.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (w *world) size(t testing.TB, tenant domain.TenantID) int64 {
	var n int64
	if err := NewLog(w.b.JS).Tree(context.Background(), tenant, func(tr *Tree) error { n = tr.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkOnce verifies tenant's exported log and that it holds each
// subject in want exactly once.
func checkOnce(t *testing.T, log []byte, want map[string]bool) *Chain {
	t.Helper()
	chain, err := VerifyLog(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(log), []byte("\n")) {
		var e Entry
		mustUnmarshal(t, line, &e)
		seen[e.Subject]++
	}
	for s := range want {
		if seen[s] != 1 {
			t.Errorf("%s: %d entries; want 1", s, seen[s])
		}
	}
	return chain
}

// Two writers at once, then a restart: every change has one entry, in a
// chain that verifies, and the checkpoint's tree is the export's; with
// the process's tap (the second writer takes it: the first reads the
// streams) and without.
func TestWritersProjectEveryChangeOnce(t *testing.T) {
	for _, noTap := range []bool{false, true} {
		t.Run(map[bool]string{false: "tap", true: "no tap"}[noTap], func(t *testing.T) { projectEveryChangeOnce(t, noTap) })
	}
}

func projectEveryChangeOnce(t *testing.T, noTap bool) {
	w := newWorld(t, testutil.NewJetStream(t))
	w.noTap = noTap
	stopA := w.runWriter(t, "writer-a")
	w.runWriter(t, "writer-b")
	want := map[string]bool{}
	for i := range 60 {
		want[string(w.grant(t, "acme", i))] = true
		w.grant(t, "beta", i)
	}
	ctx := context.Background()
	if err := w.store.PutRule(ctx, "acme", &domain.Rule{ID: "r1", Agent: "a", Text: "no rm", CreatedBy: domain.Ref{Kind: "person", ID: "u-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := Append(ctx, w.b.JS, Input{ID: "signin-1", Tenant: "acme", Type: events.TypeSignIn, Actor: Actor{Kind: "person", ID: "u-1"}, Subject: "u-1"}); err != nil {
		t.Fatal(err)
	}
	want["r1"], want["u-1"] = true, true
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 62 && w.size(t, "beta") == 60 }, "both logs complete")
	stopA()
	for i := 60; i < 80; i++ {
		want[string(w.grant(t, "acme", i))] = true
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 82 }, "the log continued")
	chain := checkOnce(t, w.export(t, "acme"), want)
	if chain.Len() != 82 {
		t.Fatalf("exported %d entries; want 82", chain.Len())
	}
	s, err := LoadSigner(ctx, w.b.JS, "", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := NewLog(w.b.JS).Checkpoint(ctx, "acme", s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenCheckpoint(cp, s.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExtends(chain, c, Origin("acme")); err != nil || c.Size != 82 {
		t.Fatalf("checkpoint %+v against the export: %v", c, err)
	}
}

// The log resumes after an entry: GET /v1/audit?after=N reads from there.
func TestEntriesAfter(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	w.runWriter(t, "writer")
	for i := range 30 {
		w.grant(t, "acme", i)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 30 }, "log complete")
	var seqs []uint64
	err := NewLog(w.b.JS).Entries(context.Background(), "acme", 17, time.Time{}, func(line []byte) error {
		var e Entry
		mustUnmarshal(t, line, &e)
		seqs = append(seqs, e.Seq)
		return nil
	})
	if err != nil || len(seqs) != 13 || seqs[0] != 18 || seqs[12] != 30 {
		t.Fatalf("got %v, %v; want 18..30", seqs, err)
	}
}

// A key kept in the state is made once, whoever asks first.
func TestSignerKeyIsMadeOnce(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	a, err := LoadSigner(context.Background(), w.b.JS, "", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadSigner(context.Background(), w.b.JS, "", testLogger(t))
	if err != nil || a.VerifierKey() != b.VerifierKey() {
		t.Fatalf("got %q and %q, %v; want one key", a.VerifierKey(), b.VerifierKey(), err)
	}
	skey, vkey, _ := NewKey()
	c, err := LoadSigner(context.Background(), w.b.JS, skey, testLogger(t))
	if err != nil || c.VerifierKey() != vkey {
		t.Fatalf("the configured key: got %q, %v; want %q", c.VerifierKey(), err, vkey)
	}
}

// Entries past their tenant's audit_retention are removed; the tree, its
// checkpoints and its proofs stay whole, and the log goes on from there.
func TestRetentionKeepsTheTree(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	w.runWriterKeeping(t, "writer", func(domain.TenantID) time.Duration { return time.Second })
	for i := range 10 {
		w.grant(t, "acme", i)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 10 }, "log complete")
	testutil.Eventually(t, 20*time.Second, func() bool { return len(w.export(t, "acme")) == 0 }, "entries removed after a second")
	w.grant(t, "acme", 10)
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 11 }, "the log went on")
	var e Entry
	mustUnmarshal(t, bytes.TrimSpace(w.export(t, "acme")), &e)
	if e.Seq != 11 || e.Prev == ZeroHash {
		t.Fatalf("the entry after the removed ones: seq %d prev %s; want 11, chained", e.Seq, e.Prev)
	}
	err := NewLog(w.b.JS).Tree(context.Background(), "acme", func(tr *Tree) error {
		p, err := tr.ProveTree(5, 11)
		if err != nil {
			return err
		}
		old, _ := tr.Root(5)
		now, _ := tr.Root(11)
		return tlog.CheckTree(p, 11, now, 5, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The tap is a shortcut: writes another process made (not tapped), KV
// removal markers (no events), writes made before the writer started, and
// a run of foreign writes longer than the gaps read one by one, all
// between tapped writes, and the log still holds every change once, in
// stream order.
func TestTapIsAShortcut(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	ctx := context.Background()
	other, err := kvstate.Open(ctx, kvstate.Config{JS: w.b.JS, Replicas: 1}) // another process: no tap
	if err != nil {
		t.Fatal(err)
	}
	grants, err := w.b.JS.KeyValue(ctx, kvstate.BucketGrants)
	if err != nil {
		t.Fatal(err)
	}
	foreign := &world{b: w.b, store: other}
	var order []string
	put := func(on *world, i int) { order = append(order, string(on.grant(t, "acme", i))) }
	for i := range 3 {
		put(w, i) // before the writer: read from the stream
	}
	w.runWriter(t, "writer")
	for i := 3; i < 60; i++ {
		switch {
		case i%3 == 0:
			put(foreign, i)
		case i%7 == 0:
			if err := grants.Delete(ctx, fmt.Sprintf("acme.grt_gone%d", i)); err != nil {
				t.Fatal(err)
			}
			put(w, i)
		default:
			put(w, i)
		}
	}
	for i := 60; i < 80; i++ {
		put(foreign, i) // more than maxGapGets in a row
	}
	put(w, 80)
	testutil.Eventually(t, 30*time.Second, func() bool { return w.size(t, "acme") == int64(len(order)) }, "the log complete")
	log := w.export(t, "acme")
	want := map[string]bool{}
	for _, id := range order {
		want[id] = true
	}
	checkOnce(t, log, want)
	var got []string
	for line := range bytes.SplitSeq(bytes.TrimSpace(log), []byte("\n")) {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Subject)
	}
	if strings.Join(got, " ") != strings.Join(order, " ") {
		t.Fatalf("entries in the order\n%v\nwant the stream's\n%v", got, order)
	}
	// The consumers the gaps were read with are gone (an ordered one
	// lingers 5 minutes unless deleted): the tapped source has none left.
	st, err := w.b.JS.Stream(ctx, kvstate.StreamOf(kvstate.BucketGrants))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		info, err := st.Info(ctx)
		return err == nil && info.State.Consumers == 0
	}, "no consumer left on the tapped stream")
}
