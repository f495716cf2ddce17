package events_test

import (
	"context"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// A stream created from its declaration reads back as the same stream, so
// that a process starting beside others leaves it alone (no update), and
// one that differs does not.
func TestDeclaredStreamsReadBackTheSame(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	for _, sc := range events.StreamConfigs(1) {
		s, err := b.JS.CreateStream(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		have := s.CachedInfo().Config
		if !events.SameStream(have, sc) {
			t.Errorf("%s: read back as different from its declaration:\n%+v", sc.Name, have)
		}
		changed := sc
		changed.Subjects = append([]string{"other.>"}, sc.Subjects...)
		if events.SameStream(have, changed) {
			t.Errorf("%s: a changed declaration compares the same", sc.Name)
		}
	}
}

// Every decider an approver can be has its work stored, on one stream:
// an agent's on the work stream its consumer reads, a person's and a
// group's on the people's work stream, which nothing consumes (a work
// subject no stream takes would stop the outbox, which retries it).
func TestEveryApproversWorkHasAStream(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	for _, sc := range events.StreamConfigs(1) {
		if _, err := b.JS.CreateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	for kind, want := range map[string]string{domain.KindAgent: events.WorkStream, domain.KindPerson: events.PeopleWorkStream, domain.KindGroup: events.PeopleWorkStream} {
		subj := events.DecideSubject("acme", domain.Ref{Kind: kind, ID: "x-1"})
		ack, err := b.JS.Publish(ctx, subj, []byte(`{}`))
		if err != nil || ack.Stream != want {
			t.Errorf("%s's work on %s: %+v %v, want it on %s", kind, subj, ack, err, want)
		}
	}
	if cfg := events.DeciderConsumerConfig(); cfg.FilterSubject != events.AgentWorkFilter {
		t.Errorf("the decider consumer reads %s, want the agents' work alone", cfg.FilterSubject)
	}
}
