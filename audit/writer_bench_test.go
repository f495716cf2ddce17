package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
)

// BenchmarkWriterLive: 8 publishers store b.N request writes of about
// 900 bytes while the writer projects them (on), or takes them from the
// tap as this process's writes (on-tap), or without it (off).
// cpu-us/write is the process's CPU time (the embedded server's
// included) per write; on less off is what the log costs a write.
func BenchmarkWriterLive(b *testing.B) {
	for _, mode := range []string{"off", "on", "on-tap"} {
		on, tapped := mode != "off", mode == "on-tap"
		b.Run(mode, func(b *testing.B) {
			w := newWorld(b, testutil.NewJetStream(b))
			w.noTap = !tapped
			if on {
				w.runWriter(b, "writer")
			}
			var next atomic.Int64
			var last atomic.Uint64
			cpu0 := cpuTime()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						id := fmt.Sprintf("req_%026d", i)
						m := &nats.Msg{Subject: "$KV.requests.acme." + id, Data: benchRecord(id), Header: nats.Header{}}
						events.ChangeHeaders(m.Header, events.TypeRequestDecided, "acme", id, 2, time.Now(), "")
						ack, err := w.b.JS.PublishMsg(context.Background(), m)
						if err != nil {
							b.Error(err)
							return
						}
						if tapped { // as kvstate tells it, once acknowledged
							w.tap.Offer(ack.Stream, ack.Sequence, m)
						}
						for s := last.Load(); s < ack.Sequence && !last.CompareAndSwap(s, ack.Sequence); s = last.Load() {
						}
					}
				})
			}
			wg.Wait()
			if on {
				waitCursor(b, w, last.Load())
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-us/write")
		})
	}
}

// waitCursor waits until the writer's cursor has passed the requests
// stream's sequence seq.
func waitCursor(b *testing.B, w *world, seq uint64) {
	st, err := w.b.JS.Stream(context.Background(), Stream)
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m, err := st.GetLastMsgForSubject(context.Background(), events.AuditCursorSubject)
		if err != nil {
			continue
		}
		var cur map[string]uint64
		if json.Unmarshal(m.Data, &cur) == nil && cur[kvstate.StreamOf(kvstate.BucketRequests)] >= seq {
			return
		}
	}
	b.Fatal("the writer did not catch up within a minute")
}

func benchRecord(id string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"tenant":"acme","agent":"agt_main","session":"s-1","turn":"t-1","tool_call_id":"c-1","capability":{"action":"tools.call","target":"refund"},"tool":"refund","arguments":{"amount":120,"currency":"GBP","order":"A-1234"},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"customer asked","call_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","timeout":"24h","status":"approved","approver":{"kind":"person","id":"u-1"},"chain":["agt_main"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":2,"created_at":"2026-12-02T01:00:00Z","deadline_at":"2026-12-03T01:00:00Z","claimed_at":null,"decision":{"status":"approved","by":{"kind":"person","id":"u-1"},"scope":"once","decided_at":"2026-12-02T01:00:01Z"},"required_approvals":1,"approvals":[]}`, id)
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCommit: the writer's atomic batches of 1 and of 256 request
// writes, mapped, sealed and stored (on disk, syncing always).
// cpu-us/batch is the process's CPU time (the server's included) per
// batch: what a batch costs whatever it holds, against what each entry
// adds.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 256} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := newWorld(b, testutil.NewJetStream(b))
			wr, err := NewWriter(WriterConfig{JS: w.b.JS, Log: NewLog(w.b.JS)})
			if err != nil {
				b.Fatal(err)
			}
			bt := &batch{w: wr, fresh: map[domain.TenantID]bool{}}
			cur, curSeq, seq := cursor{}, uint64(0), uint64(0)
			cpu0 := cpuTime()
			for b.Loop() {
				bt.reset(cur, curSeq)
				for range n {
					seq++
					id := fmt.Sprintf("req_%026d", seq)
					m := sourceMsg{seq: seq, subject: "$KV.requests.acme." + id, header: nats.Header{}, data: benchRecord(id), at: time.Now()}
					events.ChangeHeaders(m.header, events.TypeRequestDecided, "acme", id, 2, time.Now(), "")
					bt.add(m)
				}
				if curSeq, err = bt.commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-us/batch")
		})
	}
}
