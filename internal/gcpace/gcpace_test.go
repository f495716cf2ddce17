package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent}, {10 * mib, MaxPercent}, {32 * mib, 800}, {128 * mib, 200}, {256 * mib, 100},
		{512 * mib, 50}, {700 * mib, 36}, {1024 * mib, 25}, {8192 * mib, MinPercent},
	} {
		if got := Percent(c.live, 256*mib); got != c.want {
			t.Errorf("Percent(%d MiB, 256 MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	if got := Limit(600*mib, 100, 50*mib); got != math.MaxInt64 {
		t.Errorf("at GOGC 100: limit %d, want none", got)
	}
	// 640 MiB live at GOGC 20: a 768 MiB goal, 64 MiB of overhead, the
	// runtime's 5% and the slack.
	goalAndOverhead := float64(832 * mib)
	want := int64(goalAndOverhead/0.95) + limitSlack
	if got := Limit(640*mib, 20, 64*mib); got != want {
		t.Errorf("Limit(640 MiB, 20, 64 MiB) = %d MiB, want %d MiB", got/mib, want/mib)
	}
	if got := Limit(640*mib, 20, 0); got <= 768*mib {
		t.Errorf("limit %d MiB at or under the heap goal of 768 MiB", got/mib)
	}
}

// A step after a collection sets GOGC from the live heap the runtime
// measured, with a memory limit above its heap goal, and sets both back
// once that heap is gone.
func TestStepFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
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
	// 64 MiB live at GOGC 20: the limit is above the 76.8 MiB goal, and
	// not far above it.
	if lim := debug.SetMemoryLimit(-1); lim <= 76<<20 || lim > 256<<20 {
		t.Fatalf("memory limit %d MiB for 64 MiB live at GOGC %d", lim>>20, MinPercent)
	}
	if got := p.step(8 << 20); got != MinPercent {
		t.Fatalf("no collection since: GOGC %d, want it kept at %d", got, MinPercent)
	}
	runtime.KeepAlive(held)
	runtime.GC()
	// A few MiB live, against 8 MiB of headroom: over Go's default.
	got := p.step(8 << 20)
	if got <= 100 {
		t.Fatalf("heap released: GOGC %d, want over 100", got)
	}
	if now := debug.SetGCPercent(100); now != got {
		t.Fatalf("the runtime's GOGC is %d, want %d", now, got)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Fatalf("heap released: memory limit %d MiB, want none", lim>>20)
	}
}

// A heap that shrinks to a tenth of the headroom gets MaxPercent, even
// from a percent within a tenth of it.
func TestStepReachesTheCeiling(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.SetGCPercent(MaxPercent - 50)
	p := pacer{percent: MaxPercent - 50}
	runtime.GC()
	if got := p.step(1 << 40); got != MaxPercent {
		t.Fatalf("small heap from GOGC %d: GOGC %d, want %d", MaxPercent-50, got, MaxPercent)
	}
	if now := debug.SetGCPercent(100); now != MaxPercent {
		t.Fatalf("the runtime's GOGC is %d, want %d", now, MaxPercent)
	}
}

// Start paces until its stop, which leaves Go's defaults behind.
func TestStartStops(t *testing.T) {
	if Chosen() {
		t.Skip("GOGC or GOMEMLIMIT is set")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	stop := Start(1<<40, time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if now := debug.SetGCPercent(-1); now == MaxPercent {
			debug.SetGCPercent(now)
			break
		} else {
			debug.SetGCPercent(now)
		}
		if time.Now().After(deadline) {
			t.Fatal("Start never set GOGC for a small heap")
		}
	}
	stop()
	stop() // a second stop is harmless
	if now := debug.SetGCPercent(100); now != 100 {
		t.Fatalf("after stop: GOGC %d, want 100", now)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Fatalf("after stop: memory limit %d, want none", lim)
	}
}
