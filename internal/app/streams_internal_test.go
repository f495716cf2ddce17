package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// A work stream made before the people's work had a stream of its own
// (every decide subject, a work queue, a person's message still in it) is
// made again with the agents' subjects alone, and the people's work
// stream beside it; a second start leaves both as they are.
func TestDeclareStreamsMovesPeoplesWork(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	i := slices.IndexFunc(events.StreamConfigs(1), func(sc jetstream.StreamConfig) bool { return sc.Name == events.WorkStream })
	old := events.StreamConfigs(1)[i]
	old.Subjects = []string{events.DecideFilter} // as declared before the people's work had a stream
	if _, err := b.JS.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	person := events.DecideSubject("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"})
	if _, err := b.JS.Publish(ctx, person, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := declareStreams(ctx, b); err != nil {
		t.Fatal(err)
	}
	work := streamInfo(t, b.JS, events.WorkStream)
	if !slices.Equal(work.Config.Subjects, []string{events.AgentWorkFilter}) || work.State.Msgs != 0 {
		t.Fatalf("work stream: subjects %v, %d messages; want the agents' subjects and none", work.Config.Subjects, work.State.Msgs)
	}
	ack, err := b.JS.Publish(ctx, person, []byte(`{}`))
	if err != nil || ack.Stream != events.PeopleWorkStream {
		t.Fatalf("a person's work after the move: %+v %v, want it on %s", ack, err, events.PeopleWorkStream)
	}
	created := work.Created
	if err := declareStreams(ctx, b); err != nil {
		t.Fatal(err)
	}
	if again := streamInfo(t, b.JS, events.WorkStream); !again.Created.Equal(created) {
		t.Fatal("a second start made the work stream again")
	}
	if n := streamInfo(t, b.JS, events.PeopleWorkStream).State.LastSeq; n != 1 {
		t.Fatalf("the people's work stream stored %d messages by a second start, want 1", n)
	}
}

func streamInfo(t *testing.T, js jetstream.JetStream, name string) *jetstream.StreamInfo {
	t.Helper()
	st, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}
