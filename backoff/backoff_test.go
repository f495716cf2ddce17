package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	p := Policy{Base: time.Second, Max: 5 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 100: 5 * time.Second} {
		if got := p.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
	if got := (Policy{Base: time.Second}).Delay(200); got <= 0 {
		t.Errorf("uncapped Delay(200) = %v, want > 0 (no overflow)", got)
	}
	j := Policy{Base: time.Second, Max: 4 * time.Second, Jitter: true}
	for range 100 {
		if got := j.Delay(3); got < 2*time.Second || got > 4*time.Second {
			t.Fatalf("jittered Delay(3) = %v, want within [2s, 4s]", got)
		}
	}
}

func TestRetry(t *testing.T) {
	fail := errors.New("fail")
	p := Policy{Base: time.Millisecond}
	calls := 0
	err := Retry(context.Background(), p, 3, func(context.Context) error { calls++; return fail })
	if !errors.Is(err, fail) || calls != 3 {
		t.Errorf("3 attempts: err %v, calls %d; want fail after 3", err, calls)
	}
	calls = 0
	err = Retry(context.Background(), p, 0, func(context.Context) error {
		if calls++; calls < 4 {
			return fail
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Errorf("until success: err %v, calls %d; want nil after 4", err, calls)
	}
	calls = 0
	err = Retry(context.Background(), p, 10, func(context.Context) error { calls++; return Permanent(fail) })
	if err != fail || calls != 1 {
		t.Errorf("permanent: err %v, calls %d; want fail itself after 1", err, calls)
	}
}

// TestRetryWatchesCtx: a retry waiting out an hour-long delay returns as
// soon as ctx ends, with both the ctx's error and the last failure.
func TestRetryWatchesCtx(t *testing.T) {
	fail := errors.New("fail")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Retry(ctx, Policy{Base: time.Hour}, 0, func(context.Context) error { return fail })
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, fail) {
			t.Errorf("err %v, want context.Canceled joined with fail", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Retry did not return after ctx ended")
	}
}
