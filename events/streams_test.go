package events_test

import (
	"context"
	"testing"

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
