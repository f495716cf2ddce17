package app_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/servertest"
)

// BenchmarkPendingMemory submits pending requests of about 1 MB of
// arguments each over HTTP and reports the heap they hold per stored byte
// at once, after a full collection: what the request mirror holds (one
// copy, TestPendingHeldOnce) and the in-process NATS server's buffers
// (its file store's write cache, which expires, and the in-memory events
// stream, which is capped). Run with -benchtime=1x.
func BenchmarkPendingMemory(b *testing.B) {
	const n, size = 100, 1_000_000
	for range b.N {
		srv := servertest.Start(b, servertest.WithConfig(quotaTenant(n, n, n)))
		main := newClient(srv.URL, "main-1")
		base := liveHeap()
		for i := range n {
			body := map[string]any{"tool": "issue_refund", "arguments": map[string]any{"i": i, "blob": strings.Repeat("x", size)}}
			if code := main.do(b, "POST", "/v1/requests", body, nil, nil); code != 201 {
				b.Fatalf("submit %d: %d", i, code)
			}
		}
		var m runtime.MemStats
		held := liveHeap() - base
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(held)/float64(n*size), "heap-bytes/stored-byte")
		b.ReportMetric(float64(m.HeapSys-m.HeapReleased)/float64(n*size), "heap-resident/stored-byte")
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
