package kvstate_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
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
					if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAtomicBatchSize measures what nats-server charges for one
// atomic batch of n messages on a stream that fsyncs every write, one
// batch at a time: the fixed part (on an R1 file stream the server stages
// every batch in a store of its own: a directory, its metadata written
// and synced, its block synced, then removed) against the part per
// message, with that staging on the stream's disk (as nats-server does)
// and in memory (as countersign's embedded server does: internal/broker's
// staging.go). ns/op is per batch; ns/msg per message. On a 2-core virtio
// ext4 disk doing ~6k fdatasync/s a batch staged on disk cost ~3.4 ms at
// every size up to 32 messages, and ~4.1 ms at 64: the fixed part
// dominates, which is why batches pay only when they are large, and why
// the committer gathers every queued write into one.
//
//	go test -run '^$' -bench AtomicBatchSize ./kvstate/
func BenchmarkAtomicBatchSize(b *testing.B) {
	for _, staging := range []string{"disk", "memory"} {
		b.Run("staging="+staging, func(b *testing.B) { benchAtomicBatches(b, staging == "memory") })
	}
}

func benchAtomicBatches(b *testing.B, inMemory bool) {
	benchBatchSizes(b, jetstream.StreamConfig{AllowAtomicPublish: true}, inMemory, func(b *testing.B, nc *nats.Conn, _ *nats.Subscription, i, n int) {
		id := nuid.Next()
		for j := 1; j <= n; j++ {
			m := batchMsg(i, j)
			m.Header.Set("Nats-Batch-Id", id)
			m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(j))
			if j < n {
				if err := nc.PublishMsg(m); err != nil {
					b.Fatal(err)
				}
				continue
			}
			m.Header.Set("Nats-Batch-Commit", "1")
			resp, err := nc.RequestMsg(m, 10*time.Second)
			if err != nil || bytes.Contains(resp.Data, []byte(`"error"`)) {
				b.Fatalf("commit: %v %s", err, resp.Data)
			}
		}
	})
}

// benchBatchSizes runs batch (batch i of n messages, with a subscription
// to inbox.> for acknowledgements) for each size, on a stream "B" of cfg
// over subjects b.>, its atomic batches staged in memory when inMemory,
// and reports ns/msg besides ns/op (per batch).
func benchBatchSizes(b *testing.B, cfg jetstream.StreamConfig, inMemory bool, batch func(b *testing.B, nc *nats.Conn, acks *nats.Subscription, i, n int)) {
	for _, n := range []int{1, 8, 32, 64, 128} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			br := testutil.NewJetStream(b)
			nc := br.Conn
			js, _ := jetstream.New(nc)
			cfg.Name, cfg.Subjects = "B", []string{"b.>"}
			if _, err := js.CreateStream(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
			if inMemory {
				if root, err := br.StageBatchesInMemory("B"); root == "" || err != nil {
					b.Skipf("no batches in memory here (%v)", err)
				}
			}
			acks, err := nc.SubscribeSync(batchInbox + ".>")
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				batch(b, nc, acks, i, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}

// batchInbox prefixes the benchmarks' reply subjects.
var batchInbox = nats.NewInbox()

// batchMsg is message j of batch i, about a request record's size.
func batchMsg(i, j int) *nats.Msg {
	m := nats.NewMsg(fmt.Sprintf("b.%d.%d", i, j))
	m.Data = make([]byte, 600)
	return m
}

// BenchmarkFastBatchSize measures nats-server's other batched write (2.14+),
// the fast batch: messages flow-controlled through reply subjects and
// stored as they arrive, with one acknowledgement for the batch. It is not
// atomic, and on a stream that fsyncs every write each of its messages is
// stored, and synced, on its own, so it saves the round trips of
// pipelined singles but not their syncs. Compare ns/msg with
// BenchmarkAtomicBatchSize's on the same disk.
func BenchmarkFastBatchSize(b *testing.B) {
	benchBatchSizes(b, jetstream.StreamConfig{AllowBatchPublish: true}, false, func(b *testing.B, nc *nats.Conn, acks *nats.Subscription, i, n int) {
		id := nuid.Next()
		for j := 1; j <= n; j++ {
			op := 1 // append
			switch {
			case j == n:
				op = 2 // commit
			case j == 1:
				op = 0 // start
			}
			m := batchMsg(i, j)
			// <prefix>.<id>.<initial flow>.<gap mode>.<batch seq>.<operation>.$FI
			m.Reply = fmt.Sprintf("%s.%s.500.fail.%d.%d.$FI", batchInbox, id, j, op)
			if err := nc.PublishMsg(m); err != nil {
				b.Fatal(err)
			}
		}
		for { // flow-control acks, then the batch's PubAck
			resp, err := acks.NextMsg(10 * time.Second)
			if err != nil || bytes.Contains(resp.Data, []byte(`"error"`)) {
				b.Fatalf("batch: %v %v", err, resp)
			}
			if bytes.Contains(resp.Data, []byte(`"batch"`)) {
				return
			}
		}
	})
}

// BenchmarkCreateAlone measures request creates from one writer, each
// waiting for the last (the latency an agent alone feels), on the disk
// under TMPDIR.
//
//	go test -run '^$' -bench CreateAlone -benchmem ./kvstate/
func BenchmarkCreateAlone(b *testing.B) {
	s, ctx := newStore(b), context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
			b.Fatal(err)
		}
	}
}
