package kvstate_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// BenchmarkCommitWays measures request creates from 64 writers committed
// as atomic batches, as pipelined singles, and the way the chooser picks,
// on the disk under TMPDIR (run it once on a disk and once on tmpfs:
// TMPDIR=/dev/shm). ns/op is the wall time per write at that concurrency.
//
//	go test -run '^$' -bench CommitWays -count 5 ./kvstate/
func BenchmarkCommitWays(b *testing.B) {
	for _, way := range []string{"batches", "singles", "adaptive"} {
		b.Run(way, func(b *testing.B) {
			s, ctx := newStore(b), context.Background()
			switch way {
			case "batches":
				kvstate.CommitWay(s, false)
			case "singles":
				kvstate.CommitWay(s, true)
			}
			b.SetParallelism(64 / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.CreateRequest(ctx, pending(events.NewRequestID())); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
