//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxRequests bounds the load whatever -cluster.duration says.
const maxRequests = 20000

// requestsBucket holds the demo tenant's requests: its shard's among
// -cluster.shards (the cluster runs with request_shards 3 by default, so
// the shards' streams elect their leaders on different nodes, and the
// faults below hit the demo tenant's).
func requestsBucket() string {
	return kvstate.RequestBucket(kvstate.ShardOf("demo", *shards))
}

var requestsStream = kvstate.StreamOf(requestsBucket())

// Three NATS nodes from deploy/nats, two api and two deciders processes
// under load; the node leading the requests bucket and a deciders process
// are killed with SIGKILL and started again during it. Afterwards every
// acknowledged request is there, in exactly one terminal state (the one
// driven, or the one the acknowledged answer decided), with exactly one
// terminal event; a stale answer is 409 on the replicated bucket.
func TestClusterUnderFaults(t *testing.T) {
	c := startCluster(t)
	nc, js := c.connect(t)
	api1, api2 := startCountersign(t, c, "api-1", "api"), startCountersign(t, c, "api-2", "api")
	dec1 := startCountersign(t, c, "deciders-1", "deciders")
	startCountersign(t, c, "deciders-2", "deciders")
	checkReplicated(t, js)

	l := newLedger()
	d := newDriver(l, api1.addr, api2.addr)
	grantDeploys(t, d)

	var stop atomic.Bool
	load := runLoad(d, *loadWorkers, &stop)
	obs := observe(d, &stop)
	began := time.Now()
	f := injectFaults(t, c, js, dec1, *loadDuration)
	time.Sleep(time.Until(began.Add(*loadDuration)))
	stop.Store(true)
	load.Wait()
	obs.Wait()
	ranFor := time.Since(began)

	staleAnswers(t, d)
	checkOutcomes(t, c, nc, d)
	checkEvents(t, js, l)
	checkReplicated(t, js)
	for _, p := range l.problems {
		t.Error(p)
	}
	counts := l.byKind()
	for _, k := range append(append([]string(nil), kinds...), "stale") {
		if counts[k] == 0 {
			t.Errorf("no acknowledged %s request: the load did not cover it", k)
		}
	}
	t.Logf("load ran %v with %d agents: %d acknowledged requests %v, %d unacknowledged; answers: %d × 200, %d × 409; %d calls repeated after a fault",
		ranFor.Round(time.Millisecond), *loadWorkers, len(l.ids()), counts, l.unacked.Load(), l.answers200.Load(), l.answers409.Load(), l.retries.Load())
	t.Logf("faults: killed %s (leader of %s) and deciders-1; %s healthy %v after its restart, deciders-1 ready %v after its restart; longest submit (with retries) %v, longest time without an acknowledged submit %v; longest wait for the other API process to show a write %v",
		f.node, requestsStream, f.node, f.natsRecovery.Round(time.Millisecond), f.deciderRecovery.Round(time.Millisecond),
		time.Duration(l.maxSubmit.Load()).Round(time.Millisecond), time.Duration(l.maxGap.Load()).Round(time.Millisecond), time.Duration(l.maxLag.Load()).Round(time.Millisecond))
	t.Logf("fault times (UTC): %v", f.log)
}

// grantDeploys leaves agt_programmer (and agt_main) a lifetime allow grant
// for deploy_service: agt_main endorses, the person allows for a lifetime.
func grantDeploys(t *testing.T, d *driver) {
	t.Helper()
	r, ok := d.submit(tokProgrammer, call("deploy_service", 0, "5m"))
	if !ok {
		t.Fatal("setup submit not acknowledged")
	}
	if !d.sees(0, r.ID, 0) {
		t.Fatal("setup: api-1 does not show the request")
	}
	if code, _ := d.answer(0, tokMain, r.ID, 0, "allow"); code != 200 {
		t.Fatalf("setup endorsement: %d", code)
	}
	body := map[string]any{"expected": 1, "decision": "allow", "scope": "lifetime"}
	if !d.sees(1, r.ID, 1) {
		t.Fatal("setup: api-2 does not show the endorsement")
	}
	if code, got := d.answerWith(1, tokPerson, r.ID, body); code != 200 || got.Status != "approved" {
		t.Fatalf("setup lifetime approval: %d %s", code, got.Status)
	}
}

// runLoad runs workers agents, each cycling through the flows until stop.
func runLoad(d *driver, workers int, stop *atomic.Bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	var n atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; !stop.Load(); k += workers {
				i := int(n.Add(1))
				if i > maxRequests {
					return
				}
				d.flow(kinds[k%len(kinds)], i)
			}
		}()
	}
	return &wg
}

// observe reads every acknowledged request over and over, through both API
// processes, so that a second terminal state would be seen.
func observe(d *driver, stop *atomic.Bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for api := 0; !stop.Load(); api = 1 - api {
			for _, id := range d.l.ids() {
				var r record
				if d.clients[api][tokPerson].do("GET", "/v1/requests/"+id, nil, nil, &r) == 200 {
					d.l.observe(r)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return &wg
}

type faultFigures struct {
	node                          string
	natsRecovery, deciderRecovery time.Duration
	log                           []string // what happened when, for a failure's reading
}

func (f *faultFigures) note(what string) {
	f.log = append(f.log, time.Now().UTC().Format("15:04:05.000")+" "+what)
}

// injectFaults kills the node leading the requests bucket and a deciders
// process (SIGKILL), then starts both again, spread over the load.
func injectFaults(t *testing.T, c *natsCluster, js jetstream.JetStream, dec *csProcess, span time.Duration) faultFigures {
	t.Helper()
	step := span / 6
	f := faultFigures{node: leaderOf(t, js, requestsStream)}
	node := c.node(t, f.node)
	time.Sleep(step)
	f.note("kill -9 " + f.node)
	node.Kill()
	time.Sleep(step)
	f.note("kill -9 deciders-1")
	dec.Kill()
	time.Sleep(step)
	start := time.Now()
	f.note("start " + f.node)
	node.Start()
	node.WaitHealthy(t, 60*time.Second)
	f.natsRecovery = time.Since(start)
	f.note(f.node + " healthy")
	time.Sleep(step)
	start = time.Now()
	dec.restart()
	f.deciderRecovery = time.Since(start)
	f.note("deciders-1 ready")
	return f
}

// staleAnswers: after the faults, an answer with an old revision is 409
// RequestConflict and changes nothing, on a pending request and on a
// decided one; the current revision then decides.
func staleAnswers(t *testing.T, d *driver) {
	t.Helper()
	id, ok := d.pendingOnPerson("stale", 0, "approved")
	if !ok || !d.sees(0, id, 1) || !d.sees(1, id, 1) {
		t.Fatal("stale: could not set up a request waiting on the person")
	}
	for api := range 2 {
		if code, r := d.answer(api, tokPerson, id, 0, "allow"); code != 409 || r.Error != "RequestConflict" {
			t.Errorf("stale answer (expected 0 at revision 1) through api-%d: %d %s, want 409 RequestConflict", api+1, code, r.Error)
		}
	}
	for api := range 2 { // what each shows at revision 1 or later (see below)
		if r, ok := d.shows(api, id, 1); !ok || r.Status != "pending" || r.Revision != 1 {
			t.Errorf("after stale answers, api-%d: %s at revision %d, want pending at 1", api+1, r.Status, r.Revision)
		}
	}
	if code, r := d.answer(1, tokPerson, id, 1, "allow"); code != 200 || r.Status != "approved" {
		t.Fatalf("current answer: %d %s", code, r.Status)
	}
	// At once, through the other process, whose mirror may still show
	// revision 1: the compare-and-set on the bucket refuses it.
	if code, r := d.answer(0, tokPerson, id, 1, "deny"); code != 409 || r.Error != "RequestConflict" {
		t.Errorf("stale deny of a decided request: %d %s, want 409 RequestConflict", code, r.Error)
	}
	// Each process shows revision 2 in time; a read before that may be
	// served by a replica still catching up (the node restarted after the
	// faults) while this process's mirror has not the request yet, so it
	// shows an older revision: what is asserted is what each shows at 2 or
	// later, that the stale deny changed nothing.
	for api := range 2 {
		if r, ok := d.shows(api, id, 2); !ok || r.Status != "approved" || r.Revision != 2 {
			t.Errorf("after the stale deny, api-%d: %s at revision %d, want approved at 2", api+1, r.Status, r.Revision)
		}
	}
}

// checkOutcomes reads every acknowledged request once more, through the
// API and from the requests bucket's leader: it is there, terminal, as
// driven, and no poll ever saw it in another terminal state.
func checkOutcomes(t *testing.T, c *natsCluster, nc *nats.Conn, d *driver) {
	t.Helper()
	for _, id := range d.l.ids() {
		tr := d.l.reqs[id]
		stored, err := settledRecord(nc, id)
		if err != nil {
			t.Errorf("%s %s: acknowledged, but the requests bucket's leader says: %v; its writes in the stream: %s", tr.kind, id, err, history(t, nc, id))
		} else if stored.Status != tr.want {
			t.Errorf("%s %s: the bucket's leader holds it %s at revision %d, want %s; its writes in the stream: %s; last sequence per node (direct get): %s",
				tr.kind, id, stored.Status, stored.Revision, tr.want, history(t, nc, id), lastPerNode(c, id))
		}
		r, ok := d.get(id, "?wait=10s")
		if !ok {
			t.Errorf("%s %s: acknowledged but not readable through the API", tr.kind, id)
			continue
		}
		if r.Status != tr.want || r.by() != tr.wantBy {
			t.Errorf("%s %s: %s by %q, want %s by %s", tr.kind, id, r.Status, r.by(), tr.want, tr.wantBy)
		}
		if seen := d.l.seen[id]; len(seen) != 1 {
			t.Errorf("%s %s: terminal states seen %v, want exactly one", tr.kind, id, seen)
		}
	}
}

// settledRecord is leaderRecord once the request is terminal, or as it is
// after 10 s: a request submitted with a 2 s timeout in the load's last
// seconds is expired by the deciders a moment after its deadline, possibly
// after the load ended.
func settledRecord(nc *nats.Conn, id string) (record, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := leaderRecord(nc, id)
		if (err == nil && r.Status != "pending") || time.Now().After(deadline) {
			return r, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaderRecord reads a request's record with the stream's own message get,
// which its leader answers (a KV get is a direct get, which any replica,
// current or not, may answer).
func leaderRecord(nc *nats.Conn, id string) (record, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + requestsBucket() + "." + kvstate.RequestKey("demo", domain.RequestID(id))})
	m, err := nc.Request("$JS.API.STREAM.MSG.GET."+requestsStream, req, 10*time.Second)
	if err != nil {
		return record{}, err
	}
	var resp struct {
		Message *struct {
			Data []byte `json:"data"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return record{}, err
	}
	if resp.Error != nil || resp.Message == nil {
		return record{}, fmt.Errorf("message get: %+v", resp.Error)
	}
	var r record
	err = json.Unmarshal(resp.Message.Data, &r)
	return r, err
}

// lastPerNode is the stream sequence each node's own replica returns as a
// request's latest write (a direct get through a connection to that node
// only, which its local replica answers), for a failure's message.
func lastPerNode(c *natsCluster, id string) string {
	var out []string
	for _, n := range c.nodes {
		nc, err := nats.Connect(n.URL("countersign", c.password), nats.NoReconnect())
		if err != nil {
			out = append(out, n.Name+":"+err.Error())
			continue
		}
		m, err := nc.Request("$JS.API.DIRECT.GET."+requestsStream+".$KV."+requestsBucket()+"."+kvstate.RequestKey("demo", domain.RequestID(id)), nil, 5*time.Second)
		nc.Close()
		if err != nil {
			out = append(out, n.Name+":"+err.Error())
			continue
		}
		out = append(out, n.Name+":"+m.Header.Get("Nats-Sequence")+m.Header.Get("Status"))
	}
	return strings.Join(out, " ")
}

// history lists a request's writes in the requests stream, for a failure's
// message: "seq:status@revision ...".
func history(t *testing.T, nc *nats.Conn, id string) string {
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, requestsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$KV." + requestsBucket() + "." + kvstate.RequestKey("demo", domain.RequestID(id))}})
	if err != nil {
		return err.Error()
	}
	var out []string
	for {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return err.Error()
		}
		n := 0
		for m := range batch.Messages() {
			var r record
			_ = json.Unmarshal(m.Data(), &r)
			md, _ := m.Metadata()
			out = append(out, fmt.Sprintf("%d:%s@%d(%s %s)", md.Sequence.Stream, r.Status, r.Revision, m.Headers().Get("ce-type"),
				md.Timestamp.UTC().Format("15:04:05.000")))
			n++
		}
		if n == 0 {
			return fmt.Sprint(out)
		}
	}
}

// checkEvents reads the tenant's events from the events stream: one
// decided or expired event per acknowledged request, at its final
// revision, and no Nats-Msg-Id twice.
func checkEvents(t *testing.T, js jetstream.JetStream, l *ledger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	final := map[string][]string{} // request id -> "type@revision" of its terminal events
	ids := map[string]int{}
	readEvents(t, ctx, js, func(m jetstream.Msg) {
		h := m.Headers()
		ids[h.Get("Nats-Msg-Id")]++
		switch typ := h.Get("ce-type"); typ {
		case events.TypeRequestDecided, events.TypeRequestExpired, events.TypeRequestCancelled:
			final[h.Get("ce-subject")] = append(final[h.Get("ce-subject")], typ+"@"+h.Get("ce-revision"))
		}
	})
	for id, n := range ids {
		if n != 1 {
			t.Errorf("Nats-Msg-Id %q appears %d times in the events stream", id, n)
		}
	}
	for _, id := range l.ids() {
		tr := l.reqs[id]
		typ := events.TypeRequestDecided
		if tr.want == "expired" {
			typ = events.TypeRequestExpired
		}
		if got := final[id]; len(got) != 1 || got[0] != typ+"@"+strconv.Itoa(finalRevision(tr)) {
			t.Errorf("%s %s: terminal events %v, want exactly [%s@%d]", tr.kind, id, got, typ, finalRevision(tr))
		}
	}
}

// finalRevision is the revision each flow ends at.
func finalRevision(tr *tracked) int {
	switch tr.kind {
	case "person", "race", "stale":
		return 2 // endorsed, then answered
	case "deny", "expire":
		return 1
	}
	return 0 // decided in its submit
}

func readEvents(t *testing.T, ctx context.Context, js jetstream.JetStream, fn func(jetstream.Msg)) {
	t.Helper()
	cons, err := js.OrderedConsumer(ctx, events.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.TenantEventsFilter("demo")}})
	if err != nil {
		t.Fatal(err)
	}
	// Read every event the stream held when the consumer was made: an
	// empty fetch is not the end (a stream just back from a node's
	// restart may answer the first fetches late).
	info := cons.CachedInfo()
	if info == nil {
		t.Fatal("events stream: the ordered consumer has no info")
	}
	want := info.NumPending
	for n := uint64(0); n < want; {
		batch, err := cons.Fetch(int(min(want-n, 500)), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatalf("events stream after %d of %d events: %v", n, want, err)
		}
		for m := range batch.Messages() {
			fn(m)
			n++
		}
		if ctx.Err() != nil {
			t.Fatalf("events stream: read %d of its %d events: %v", n, want, ctx.Err())
		}
	}
}

// checkReplicated: the requests bucket runs on three replicas, all current.
func checkReplicated(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, requestsStream)
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("%s: %d replicas (%+v), want 3", requestsStream, info.Config.Replicas, info.Cluster)
	}
	var peers []string
	for _, p := range info.Cluster.Replicas {
		peers = append(peers, p.Name)
	}
	sort.Strings(peers)
	t.Logf("%s: leader %s, replicas %v, allow_direct %v", requestsStream, info.Cluster.Leader, peers, info.Config.AllowDirect)
	var leaders []string
	for i := range *shards {
		stream := kvstate.StreamOf(kvstate.RequestBucket(i))
		leaders = append(leaders, stream+"@"+leaderOf(t, js, stream))
	}
	t.Logf("request shards' leaders: %v", leaders)
}
