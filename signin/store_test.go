package signin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/signin"
)

func openStore(t *testing.T, now func() time.Time) (*signin.Store, *signin.Store) {
	t.Helper()
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	a, err := signin.OpenStore(ctx, b.JS, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := signin.OpenStore(ctx, b.JS, 1, now) // a second process on the same state
	if err != nil {
		t.Fatal(err)
	}
	return a, other
}

// A flow is taken once: of many takers, in two processes, one gets it.
func TestFlowIsTakenOnce(t *testing.T) {
	a, b := openStore(t, nil)
	ctx := context.Background()
	state, f, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := []*signin.Store{a, b}[i%2]
			got, err := st.Take(ctx, state)
			switch {
			case err == nil && got == f:
				won.Add(1)
			case err != nil && !errors.Is(err, signin.ErrNoFlow):
				t.Errorf("Take: %v", err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d takers got the flow, want exactly 1", won.Load())
	}
}

// A session is seen by every process, lasts at most MaxSession, and ends
// everywhere when ended in one.
func TestSessionLifetime(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	a, b := openStore(t, clock)
	ctx := context.Background()
	tok, s, err := a.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1", ExpiresAt: clock().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if want := clock().Add(signin.MaxSession); !s.ExpiresAt.Equal(want) || s.CSRF == "" {
		t.Fatalf("session expires %v (csrf %q), want %v and a csrf token", s.ExpiresAt, s.CSRF, want)
	}
	if got, err := b.Lookup(ctx, tok); err != nil || got.Member != "u-1" {
		t.Fatalf("the other process: %v %v", got, err)
	}
	now.Add(int64(signin.MaxSession))
	if _, err := b.Lookup(ctx, tok); !errors.Is(err, signin.ErrNoSession) {
		t.Fatalf("after 8h: %v, want ErrNoSession", err)
	}
	now.Add(-int64(time.Hour))
	if err := a.End(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lookup(ctx, tok); !errors.Is(err, signin.ErrNoSession) {
		t.Fatalf("after End in the other process: %v, want ErrNoSession", err)
	}
}
