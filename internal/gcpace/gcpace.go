// Package gcpace keeps the Go collector's headroom over the live heap at
// a fixed amount.
//
// With the default GOGC of 100 a process may grow to twice its live heap
// before the collector runs. That suits neither end. A large heap wastes
// memory: a server holding a million requests keeps about 600 MB live,
// and would sit at 1.2 GB for 600 MB of garbage it does not need. A small
// heap wastes CPU: a server that has just started, with 30 MB live and
// serving thousands of requests a second, collects every 30 MB it
// allocates, several times a second, and marks its whole heap each time.
// Pace sets GOGC so that the headroom is the fixed amount whatever the
// live heap: lower than 100 as the heap grows past it (but never below a
// fifth of the live heap, so the collector cannot run back to back),
// higher while the heap is smaller (at most MaxPercent), so the process
// may use the live heap plus the headroom and no more.
//
// While it lowers GOGC under 100 it also sets a soft memory limit a
// little above what that GOGC lets the runtime hold (the heap goal, plus
// the runtime's own overhead as last measured): the background scavenger
// returns freed pages to the OS only slowly, and a server that has just
// freed a burst's garbage otherwise keeps it resident for minutes. The
// limit makes the runtime return them as it goes. It sits above the heap
// goal, so the collector still runs when GOGC says; earlier only when the
// live heap jumps between two steps (a snapshot being saved), until the
// next step raises the limit with it.
//
// It leaves the collector alone when the environment sets GOGC or
// GOMEMLIMIT: the operator has chosen.
package gcpace

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// MinPercent is the lowest GOGC Pace sets: the headroom never falls below
// a fifth of the live heap.
const MinPercent = 20

// MaxPercent is the highest GOGC Pace sets: a heap of under a tenth of
// the headroom (a process just started, or idle) is collected when it
// has grown elevenfold, not only when it has grown by the headroom.
const MaxPercent = 1000

// Percent is the GOGC that gives a live heap of live bytes headroom bytes
// of headroom: 100 (Go's default) for a heap of headroom, more for a
// smaller one (at most MaxPercent), less for a larger one (never below
// MinPercent).
func Percent(live, headroom uint64) int {
	if live == 0 {
		return MaxPercent
	}
	return int(min(MaxPercent, max(MinPercent, headroom*100/live)))
}

// Chosen reports whether the environment sets the collector's pace.
func Chosen() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// Pace sets GOGC from the live heap after every collection (checked
// every interval) for the life of the process, unless Chosen. It returns
// at once. It has no end on purpose: a stop (saving a snapshot of a large
// mirror) is when the bound matters most.
func Pace(headroom uint64, interval time.Duration) {
	Start(headroom, interval)
}

// Start paces as Pace does until the returned stop is called; stop
// returns once the pacing has ended and the collector has Go's defaults
// again (GOGC 100, no memory limit). For a process that runs the server
// only for a while: countersign bench, whose floor runs at Go's defaults.
// Unless Chosen; stop is then a no-op.
func Start(headroom uint64, interval time.Duration) (stop func()) {
	if Chosen() {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var p pacer
		for {
			select {
			case <-quit:
				debug.SetGCPercent(100)
				debug.SetMemoryLimit(math.MaxInt64)
				return
			case <-t.C:
				p.step(headroom)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// pacer remembers the last collection it saw and the GOGC and memory
// limit it set.
type pacer struct {
	cycles  uint64
	percent int
	limit   int64
}

// limitSlack is what the memory limit leaves above the heap goal and the
// runtime's overhead, besides the 5% under the limit the runtime keeps
// free of retained pages.
const limitSlack = 16 << 20

// Limit is the soft memory limit for a live heap of live bytes collected
// at GOGC percent, with overhead bytes of the runtime's memory that are
// not heap objects (span fragmentation, stacks, metadata): math.MaxInt64
// (none) at Go's default percent and above, where the live heap is at
// most the headroom and its goal at most twice the headroom.
func Limit(live uint64, percent int, overhead uint64) int64 {
	if percent >= 100 {
		return math.MaxInt64
	}
	goal := live + live*uint64(percent)/100
	return int64(float64(goal+overhead)/0.95) + limitSlack
}

// step sets GOGC from the live heap, when a collection ran since the last
// step and the percent moved by more than a tenth, or to MaxPercent once
// the heap is that small, and the memory limit to go with it; it returns
// the percent in force.
func (p *pacer) step(headroom uint64) int {
	s := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(s)
	if p.percent == 0 {
		p.percent, p.limit = 100, math.MaxInt64
	}
	cycles, live := s[0].Value.Uint64(), s[1].Value.Uint64()
	if cycles == p.cycles {
		return p.percent
	}
	p.cycles = cycles
	if want := Percent(live, headroom); want != p.percent && (want == MaxPercent || want*10 < p.percent*9 || want*10 > p.percent*11) {
		debug.SetGCPercent(want)
		p.percent = want
	}
	// What the runtime holds besides heap objects and free pages: it
	// counts against the limit whatever the collector does.
	var overhead uint64
	if held, rest := s[2].Value.Uint64(), s[3].Value.Uint64()+s[4].Value.Uint64()+s[5].Value.Uint64(); held > rest {
		overhead = held - rest
	}
	if limit := Limit(live, p.percent, overhead); limit != p.limit {
		debug.SetMemoryLimit(limit)
		p.limit = limit
	}
	return p.percent
}
