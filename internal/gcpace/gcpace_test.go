package gcpace

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {10 * mib, 100}, {256 * mib, 100}, {512 * mib, 50}, {700 * mib, 36}, {1024 * mib, 25}, {8192 * mib, MinPercent},
	} {
		if got := Percent(c.live, 256*mib); got != c.want {
			t.Errorf("Percent(%d MiB, 256 MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

// A step after a collection sets GOGC from the live heap the runtime
// measured, and sets it back up once that heap is gone.
func TestStepFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC()
	var p pacer
	if got := p.step(8 << 20); got != MinPercent {
		t.Fatalf("live heap of 64 MiB, headroom 8 MiB: GOGC %d, want %d", got, MinPercent)
	}
	if now := debug.SetGCPercent(MinPercent); now != MinPercent {
		t.Fatalf("the runtime's GOGC is %d, want %d", now, MinPercent)
	}
	if got := p.step(8 << 20); got != MinPercent {
		t.Fatalf("no collection since: GOGC %d, want it kept at %d", got, MinPercent)
	}
	runtime.KeepAlive(held)
	runtime.GC()
	if got := p.step(8 << 20); got != 100 {
		t.Fatalf("heap released: GOGC %d, want 100", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Fatalf("the runtime's GOGC is %d, want 100", now)
	}
}

// A heap that shrinks below the headroom gets Go's default back, even
// from a percent within a tenth of it.
func TestStepRestoresTheDefault(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.SetGCPercent(95)
	p := pacer{percent: 95}
	runtime.GC()
	if got := p.step(1 << 40); got != 100 {
		t.Fatalf("small heap from GOGC 95: GOGC %d, want 100", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Fatalf("the runtime's GOGC is %d, want 100", now)
	}
}
