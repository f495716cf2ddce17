package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// newBatch is an empty batch of a new writer, after the cursor as stored.
func newBatch(t *testing.T, w *world) *batch {
	t.Helper()
	wr, err := NewWriter(WriterConfig{JS: w.b.JS, Log: NewLog(w.b.JS)})
	if err != nil {
		t.Fatal(err)
	}
	cur, curSeq, err := wr.loadCursor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{w: wr, fresh: map[domain.TenantID]bool{}}
	b.reset(cur, curSeq)
	return b
}

// commitChanges stores changes as one batch, after the cursor as stored.
func commitChanges(t *testing.T, w *world, changes []change) {
	t.Helper()
	b := newBatch(t, w)
	b.changes = changes
	if _, err := b.commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// entryMessages counts the messages holding tenant's entries.
func entryMessages(t *testing.T, w *world, tenant domain.TenantID) uint64 {
	t.Helper()
	st, err := w.b.JS.Stream(context.Background(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(events.AuditEntrySubject(tenant)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[events.AuditEntrySubject(tenant)]
}

// seqsOf reads tenant's entries after after, up to until.
func seqsOf(t *testing.T, w *world, tenant domain.TenantID, after uint64, until time.Time) []uint64 {
	t.Helper()
	var seqs []uint64
	err := NewLog(w.b.JS).Entries(context.Background(), tenant, after, until, func(line []byte) error {
		var e Entry
		mustUnmarshal(t, line, &e)
		seqs = append(seqs, e.Seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

// A batch stores each tenant's entries as one message (a stored message
// costs the server a write and an fsync); reading by after and until
// finds entries inside a message.
func TestABatchPacksEachTenantsEntries(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var changes []change
	for i := range 30 {
		tenant := []domain.TenantID{"acme", "beta"}[i%2]
		changes = append(changes, one(tenant, events.TypeGrantCreated, Actor{Kind: "system"}, fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second), nil)...)
	}
	commitChanges(t, w, changes)
	commitChanges(t, w, changes[:4]) // a second batch: acme 16, 17
	if n := entryMessages(t, w, "acme"); n != 2 {
		t.Errorf("acme's 17 entries in %d messages; want 2, one a batch", n)
	}
	checkOnce(t, w.export(t, "acme"), nil)
	if got := seqsOf(t, w, "acme", 6, time.Time{}); len(got) != 11 || got[0] != 7 || got[10] != 17 {
		t.Errorf("after 6: %v; want 7..17", got)
	}
	// acme's entry n (n <= 15) is change 2(n-1), at t0 + 2(n-1) s.
	if got := seqsOf(t, w, "acme", 2, t0.Add(10*time.Second)); len(got) != 4 || got[0] != 3 || got[3] != 6 {
		t.Errorf("after 2 until t0+10s: %v; want 3..6", got)
	}
}

// Entries too large to share a message each go in one: none is refused
// for the server's payload limit, and the log reads back whole.
func TestLargeEntriesSplitAcrossMessages(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	big, _ := json.Marshal(strings.Repeat("x", maxPack*2/5))
	var changes []change
	for i := range 5 {
		changes = append(changes, one("acme", events.TypeGrantCreated, Actor{Kind: "system"}, fmt.Sprint(i), time.Now(), big)...)
	}
	commitChanges(t, w, changes)
	if n := entryMessages(t, w, "acme"); n != 3 {
		t.Errorf("5 entries of %d bytes in %d messages; want 3 (two, two, one)", len(big), n)
	}
	if got := seqsOf(t, w, "acme", 3, time.Time{}); len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Errorf("after 3: %v; want 4, 5", got)
	}
	checkOnce(t, w.export(t, "acme"), nil)
}

// A batch waits for the gap since the last commit unless it fills first:
// under load, few large batches rather than many small ones.
func TestABatchWaitsForTheGapUnlessFull(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	wr, err := NewWriter(WriterConfig{JS: w.b.JS, Log: NewLog(w.b.JS)})
	if err != nil {
		t.Fatal(err)
	}
	wr.gap, wr.most = time.Hour, 40
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = wr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	w.grant(t, "acme", 0)
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 1 }, "the first change committed at once")
	for i := 1; i < 11; i++ {
		w.grant(t, "acme", i)
	}
	time.Sleep(500 * time.Millisecond) // a check that nothing happens
	if n := w.size(t, "acme"); n != 1 {
		t.Fatalf("log size %d within the gap; want 1", n)
	}
	for i := 11; i <= wr.most; i++ {
		w.grant(t, "acme", i)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == int64(1+wr.most) }, "a full batch committed")
}

// perBatch is how many tenants' single small entries one batch holds: an
// entries message and a tree message each, and the cursor, within the
// server's 1,000.
const perBatch = (maxBatchMsgs - 1) / 2

// A config revision applies to more tenants than a batch holds entries
// (the server refuses a batch of over 1,000 messages): it is split
// across batches, each tenant's log gets its one entry, and the cursor
// passes the revision once all are stored.
func TestAConfigOfManyTenantsIsSplitAcrossBatches(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	tenants := make([]domain.TenantID, 700)
	for i := range tenants {
		tenants[i] = domain.TenantID(fmt.Sprintf("t%04d", i))
	}
	wr, err := NewWriter(WriterConfig{JS: w.b.JS, Log: NewLog(w.b.JS), ConfigTenants: func([]byte) []domain.TenantID { return tenants }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = wr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, _, err := w.store.PublishConfig(context.Background(), []byte("tenants: []\n")); err != nil {
		t.Fatal(err)
	}
	w.grant(t, "t0699", 1) // after the revision: written once it is
	testutil.Eventually(t, 30*time.Second, func() bool { return w.size(t, "t0699") == 2 }, "the last tenant's log has the revision and the grant")
	st, err := w.b.JS.Stream(context.Background(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(events.AuditEntryFilter))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.State.Subjects) != len(tenants) {
		t.Fatalf("%d tenants' logs; want %d", len(info.State.Subjects), len(tenants))
	}
	for _, tn := range []domain.TenantID{"t0000", tenants[perBatch-1], tenants[perBatch], "t0698"} {
		if n := w.size(t, tn); n != 1 {
			t.Errorf("%s: %d entries; want 1", tn, n)
		}
	}
	cur, _, err := wr.loadCursor(context.Background())
	if err != nil || len(cur) == 0 {
		t.Fatalf("cursor %v, %v", cur, err)
	}
	for k := range cur {
		if strings.HasSuffix(k, "#done") {
			t.Errorf("cursor %v: a revision stored whole is passed, not counted", cur)
		}
	}
}

// A writer that starts after a batch stored part of a revision's
// entries (the cursor counts them) stores only the rest.
func TestARevisionStoredInPartContinuesWhereItStopped(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	tenants := make([]domain.TenantID, perBatch+44)
	for i := range tenants {
		tenants[i] = domain.TenantID(fmt.Sprintf("t%04d", i))
	}
	cfg := WriterConfig{JS: w.b.JS, Log: NewLog(w.b.JS), ConfigTenants: func([]byte) []domain.TenantID { return tenants }}
	if _, _, err := w.store.PublishConfig(context.Background(), []byte("tenants: []\n")); err != nil {
		t.Fatal(err)
	}
	// The first part, as a writer killed after its first batch left it.
	first, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src := slices.Index(sources[:], kvstate.StreamOf(kvstate.BucketConfig))
	st, err := w.b.JS.Stream(context.Background(), sources[src])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{w: first, fresh: map[domain.TenantID]bool{}}
	b.reset(cursor{}, 0)
	b.add(sourceMsg{src: src, seq: raw.Sequence, subject: raw.Subject, header: raw.Header, data: raw.Data, at: raw.Time})
	if _, err := b.commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	lastIn, firstOut, last := tenants[perBatch-1], tenants[perBatch], tenants[len(tenants)-1]
	if n := w.size(t, lastIn); n != 1 || w.size(t, firstOut) != 0 {
		t.Fatalf("after the first part: %s %d entries, %s %d; want 1, 0", lastIn, n, firstOut, w.size(t, firstOut))
	}
	second, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = second.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testutil.Eventually(t, 30*time.Second, func() bool { return w.size(t, last) == 1 }, "the rest stored")
	for _, tn := range []domain.TenantID{"t0000", lastIn, firstOut, last} {
		if n := w.size(t, tn); n != 1 {
			t.Errorf("%s: %d entries; want 1", tn, n)
		}
	}
}

// lastEntriesMessage reads the last message stored on subject.
func lastEntriesMessage(t *testing.T, w *world, subject string) jetstream.Msg {
	t.Helper()
	cons, err := w.b.JS.OrderedConsumer(context.Background(), Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverLastPolicy})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// A packed entries message is stored compressed, and reads back as the
// lines the log exports; a message stored before compression reads as
// it is, and one of an unknown encoding is an error, not garbage.
func TestEntriesAreStoredCompressed(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	var changes []change
	for i := range 40 {
		changes = append(changes, one("acme", events.TypeGrantCreated, Actor{Kind: "system"}, fmt.Sprint(i), time.Now(), nil)...)
	}
	commitChanges(t, w, changes)
	msg := lastEntriesMessage(t, w, events.AuditEntrySubject("acme"))
	if enc := msg.Headers().Get(hdrEncoding); enc != encodingS2 {
		t.Fatalf("%s: %q; want %q", hdrEncoding, enc, encodingS2)
	}
	lines, err := Lines(msg)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(string(w.export(t, "acme")), "\n"); string(lines) != want {
		t.Errorf("lines:\n%s\nwant the export:\n%s", lines, want)
	}
	if len(msg.Data())*3 > len(lines) {
		t.Errorf("40 entries: %d bytes stored for %d; want a third or less", len(msg.Data()), len(lines))
	}

	for _, c := range []struct{ tenant, enc, data string }{{"old", "", "line 1\nline 2"}, {"new", "zstd", "x"}} {
		m := nats.NewMsg(events.AuditEntrySubject(domain.TenantID(c.tenant)))
		m.Data = []byte(c.data)
		if c.enc != "" {
			m.Header.Set(hdrEncoding, c.enc)
		}
		if _, err := w.b.JS.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		got, err := Lines(lastEntriesMessage(t, w, m.Subject))
		switch {
		case c.enc == "" && (err != nil || string(got) != c.data):
			t.Errorf("uncompressed: %q, %v; want %q", got, err, c.data)
		case c.enc != "" && (err == nil || !strings.Contains(err.Error(), c.enc)):
			t.Errorf("encoding %s: %q, %v; want an error naming it", c.enc, got, err)
		}
	}
}

// One tenant's small entries fill a batch to its most, far past what one
// entry a message would allow the server's 1,000, and commit as one.
func TestOneTenantsEntriesFillABatch(t *testing.T) {
	w := newWorld(t, testutil.NewJetStream(t))
	data := []byte(`{"id":"req_1","status":"approved","arguments":{"amount":4900,"currency":"GBP"}}`)
	var cs []change
	for i := range maxChanges + 10 {
		cs = append(cs, one("acme", events.TypeRequestDecided, Actor{Kind: "system"}, fmt.Sprint("req_", i), time.Now(), data)...)
	}
	b := newBatch(t, w)
	b.addChanges(0, 1, cs)
	if len(b.changes) != maxChanges || len(b.carry.changes) != 10 || !b.full() {
		t.Fatalf("took %d, carried %d; want %d and 10", len(b.changes), len(b.carry.changes), maxChanges)
	}
	if _, err := b.commit(context.Background()); err != nil {
		t.Fatalf("a full batch of one tenant's entries: %v", err)
	}
	if n := w.size(t, "acme"); n != int64(maxChanges) {
		t.Fatalf("log size %d; want %d", n, maxChanges)
	}
}

// However large the lines, a batch's messages stay within the server's
// limit: the bound take counts is never under what packing stores.
func TestTakeBoundsTheMessages(t *testing.T) {
	wr, err := NewWriter(WriterConfig{JS: testutil.NewJetStream(t).JS, Log: &Log{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{100, maxPack / 5, maxPack/2 - 600, maxPack / 2, maxPack + 1} {
		b := &batch{w: wr}
		b.reset(cursor{}, 0)
		data, _ := json.Marshal(strings.Repeat("x", size))
		var cs []change
		for i := range min(3000, 600*maxPack/size+10) { // enough to pass 1,000 messages
			tn := domain.TenantID(fmt.Sprint("t", i%3))
			cs = append(cs, one(tn, events.TypeGrantCreated, Actor{Kind: "system"}, fmt.Sprint(i), time.Now(), data)...)
		}
		b.addChanges(0, 1, cs)
		if b.msgs > maxBatchMsgs {
			t.Errorf("lines of %d bytes: a bound of %d messages", size, b.msgs)
		}
		// What the packer stores: per tenant, a message closed when the
		// next line would take it past maxPack; a tree message each; the
		// cursor.
		msgs, fill := 1, map[domain.TenantID]int{}
		packed := map[domain.TenantID]int{}
		for _, c := range b.changes {
			e := c.entry
			e.Seq, e.Prev = 1<<40, ZeroHash // as long as a sealed line's
			line, err := appendSeal(nil, &e, c.canonical)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case packed[c.tenant] == 0:
				msgs += 2 // its first entries message and its tree message
				fill[c.tenant] = len(line)
			case fill[c.tenant]+1+len(line) > maxPack:
				msgs++
				fill[c.tenant] = len(line)
			default:
				fill[c.tenant] += 1 + len(line)
			}
			packed[c.tenant]++
		}
		if msgs > b.msgs {
			t.Errorf("lines of %d bytes: %d changes pack into %d messages, over the bound of %d", size, len(b.changes), msgs, b.msgs)
		}
		if msgs > maxBatchMsgs {
			t.Errorf("lines of %d bytes: %d messages", size, msgs)
		}
		if len(b.carry.changes) == 0 && size >= maxPack/5 {
			t.Errorf("lines of %d bytes: all %d changes in one batch", size, len(b.changes))
		}
	}
}
