package heal

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// Heal creates what is missing and re-derives only after a stream was
// re-created since it last looked (or when forced); a failed re-derivation
// is tried again at the next Heal.
func TestHealRederivesAfterALostStream(t *testing.T) {
	js := testutil.NewJetStream(t).JS
	ctx := context.Background()
	configs := []jetstream.StreamConfig{{Name: "HEAL_T", Subjects: []string{"healt.>"}, Storage: jetstream.MemoryStorage}}
	var rederived int
	var fail error
	s := New(js, configs, func(context.Context) error { rederived++; return fail }, slog.Default())
	lose := func() {
		if err := js.DeleteStream(ctx, "HEAL_T"); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	for _, step := range []struct {
		name   string
		before func()
		force  bool
		fail   error
		want   int // re-derivations so far
	}{
		{"first look: created, nothing to re-derive", nil, false, nil, 0},
		{"nothing lost", nil, false, nil, 0},
		{"forced", nil, true, nil, 1},
		{"lost: re-created and re-derived", lose, false, nil, 2},
		{"lost again, the re-derivation fails", lose, false, boom, 3},
		{"the next look re-derives again", nil, false, nil, 4},
		{"and then no more", nil, false, nil, 4},
	} {
		if step.before != nil {
			step.before()
		}
		fail = step.fail
		if err := s.Heal(ctx, step.force); !errors.Is(err, step.fail) {
			t.Fatalf("%s: Heal = %v, want %v", step.name, err, step.fail)
		}
		if _, err := js.Stream(ctx, "HEAL_T"); err != nil {
			t.Fatalf("%s: the stream: %v", step.name, err)
		}
		if rederived != step.want {
			t.Fatalf("%s: re-derived %d times, want %d", step.name, rederived, step.want)
		}
	}
}
