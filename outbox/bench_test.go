package outbox_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkDerive measures what deriving one change's event costs: b.N
// request changes (each a decided record of about 900 bytes with its
// CloudEvent headers, as an auto-decided submit writes) are stored first,
// then the clock runs until every one is derived. cpu-us/op is the
// process's CPU per change, the embedded server's included (the machine's
// other load inflates it less than ns/op).
//
//	go test -run '^$' -bench Derive -benchtime 20000x ./outbox/
//
// way=outbox: the outbox republishes each on the events stream and acks
// it, as it runs in production. way=sourced: nats-server sources the
// requests stream into an in-memory stream through a subject transform,
// the server-side derivation this package does not use (a transform maps
// subject tokens only, and a request's subject, $KV.requests.<tenant>.<id>,
// does not hold the type that countersign.<tenant>.events.<type> needs,
// SPEC §9); it is here as the bound a derivation on the server could reach.
func BenchmarkDerive(b *testing.B) {
	b.Run("way=outbox", func(b *testing.B) { benchDerive(b, runOutbox) })
	b.Run("way=sourced", func(b *testing.B) { benchDerive(b, runSourced) })
}

func benchDerive(b *testing.B, derive func(ctx context.Context, b *testing.B, br *broker.Broker, store *kvstate.Store, vs *views.Views) (done func() bool)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := testutil.NewJetStream(b)
	cfg, err := config.Parse([]byte("tenants: [{id: acme}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	tenants, err := cfg.DomainTenants()
	if err != nil {
		b.Fatal(err)
	}
	store, err := kvstate.Open(ctx, kvstate.Config{JS: br.JS, Replicas: 1})
	if err != nil {
		b.Fatal(err)
	}
	vs, err := views.New(views.Config{Store: store, Tenants: tenants})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = vs.Run(ctx) }()
	if err := vs.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	data := []byte(`{"id":"x","tenant":"acme","status":"approved","payload":"` + strings.Repeat("p", 800) + `"}`)
	var last jetstream.PubAckFuture
	for i := range b.N {
		id := fmt.Sprintf("req_%08d", i)
		m := &nats.Msg{Subject: "$KV." + kvstate.BucketRequests + ".acme." + id, Data: data, Header: nats.Header{}}
		events.ChangeHeaders(m.Header, events.TypeRequestDecided, "acme", id, 0, time.Now(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		if last, err = br.JS.PublishMsgAsync(m); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 || i == b.N-1 {
			select {
			case <-last.Ok():
			case err := <-last.Err():
				b.Fatal(err)
			}
		}
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	done := derive(ctx, b, br, store, vs)
	for !done() {
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

// runOutbox starts an outbox; done once its consumer has acked every change.
func runOutbox(ctx context.Context, b *testing.B, br *broker.Broker, store *kvstate.Store, vs *views.Views) func() bool {
	svc, err := approvals.New(approvals.Config{Store: store, Views: vs, Checker: newChecker(vs)})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(outbox.Config{JS: br.JS, Store: store, Views: vs, Grants: svc, Streams: events.StreamConfigs(1)})
	if err != nil {
		b.Fatal(err)
	}
	for _, sc := range events.StreamConfigs(1) {
		if _, err := br.JS.CreateOrUpdateStream(ctx, sc); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = ob.Run(ctx) }()
	return func() bool {
		c, err := br.JS.Consumer(ctx, kvstate.StreamOf(kvstate.BucketRequests), outbox.Consumer)
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		return err == nil && info.Delivered.Stream > 0 && info.NumPending == 0 && info.NumAckPending == 0
	}
}

// runSourced creates an in-memory stream sourcing the requests stream;
// done once it holds every change.
func runSourced(ctx context.Context, b *testing.B, br *broker.Broker, _ *kvstate.Store, _ *views.Views) func() bool {
	st, err := br.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name: "DERIVED", Storage: jetstream.MemoryStorage, Duplicates: time.Minute,
		Sources: []*jetstream.StreamSource{{Name: kvstate.StreamOf(kvstate.BucketRequests), SubjectTransforms: []jetstream.SubjectTransformConfig{{
			Source: "$KV." + kvstate.BucketRequests + ".*.*", Destination: "countersign.{{wildcard(1)}}.derived.{{wildcard(2)}}"}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return func() bool {
		info, err := st.Info(ctx)
		return err == nil && info.State.Msgs >= uint64(b.N)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
