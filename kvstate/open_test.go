package kvstate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Every process opens the store at start. A second Open of buckets that
// are already as declared must not update their streams: an update resets
// the requests stream's atomic publish under the processes writing to it,
// and races their consumer creation inside nats-server.
func TestReopenLeavesDeclaredBucketsAlone(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	updated := make(chan string, 64)
	sub, err := b.Conn.Subscribe("$JS.EVENT.ADVISORY.STREAM.UPDATED.>", func(m *nats.Msg) {
		updated <- m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := b.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	// A marker stream's update: its advisory comes after any the second
	// Open caused.
	marker := jetstream.StreamConfig{Name: "MARKER", Subjects: []string{"marker"}, Storage: jetstream.MemoryStorage}
	if _, err := b.JS.CreateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	marker.Description = "updated"
	if _, err := b.JS.UpdateStream(ctx, marker); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case name := <-updated:
			if name == "MARKER" {
				return
			}
			t.Fatalf("the second Open updated stream %s", name)
		case <-time.After(10 * time.Second):
			t.Fatal("no advisory for the marker stream's update")
		}
	}
}

// Replicas above 1 asked of a standalone NATS server (nats_url with the
// clustered default of 3, say) fail at once, with a message that names
// the setting, instead of retrying silently while the process serves
// nothing.
func TestOpenRefusesReplicasOnAStandaloneServer(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 3})
	if err == nil {
		t.Fatal("Open with 3 replicas on a standalone server succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("Open retried until its deadline: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "replicas is 3") || !strings.Contains(msg, "set replicas: 1") {
		t.Fatalf("error does not name the setting: %v", err)
	}
	// Nothing was created.
	if _, err := b.JS.KeyValue(ctx, kvstate.BucketRequests); err == nil {
		t.Fatal("a bucket was created")
	}
}

// Open refuses a Config without JetStream before it touches anything.
func TestOpenRefusesConfigWithoutJS(t *testing.T) {
	if _, err := kvstate.Open(context.Background(), kvstate.Config{Replicas: 1}); err == nil || !strings.Contains(err.Error(), "JS is required") {
		t.Fatalf("Open without JS: %v, want it refused", err)
	}
}
