package app_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"golang.org/x/sync/errgroup"
)

// BenchmarkPendingMemory submits pending requests over HTTP and reports
// what holding one more costs the process (the server and its embedded
// NATS server, in this process), per byte the requests bucket's stream's
// message blocks grew by on disk: its resident memory (VmRSS) and its
// live heap, each read after a full collection that returns freed pages
// to the OS, and the heap's spans in use (live heap plus the free slots
// of partly used spans). It submits two batches and reports the second: the first fills
// what is bounded whatever the number of requests (the in-memory events
// stream, capped at 32 MiB, which 20,000 small requests' events do not
// fill and 40,000 do, and the file stores' block caches). Two shapes: 100
// requests of about 1 MB of arguments, and 20,000 of about 100 bytes
// (about 1.3 KB stored) after 40,000. Run with -benchtime=1x. With
// HEAPPROF=file set, it writes heap profiles after each batch (file.0,
// file), for go tool pprof -base file.0 file.
func BenchmarkPendingMemory(b *testing.B) {
	for _, c := range []struct {
		name          string
		warm, n, size int
	}{{"args=1MB", 100, 100, 1_000_000}, {"args=100B", 40_000, 20_000, 100}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				total := c.warm + c.n
				srv := servertest.Start(b, servertest.WithConfig(quotaTenant(total, total, total)))
				main := newClient(srv.URL, "main-1")
				batch := func(from, n int) {
					var g errgroup.Group
					g.SetLimit(8)
					for i := from; i < from+n; i++ {
						g.Go(func() error {
							body := map[string]any{"tool": "issue_refund", "arguments": map[string]any{"i": i, "blob": strings.Repeat("x", c.size)}}
							if code := main.do(b, "POST", "/v1/requests", body, nil, nil); code != 201 {
								return fmt.Errorf("submit %d: %d", i, code)
							}
							return nil
						})
					}
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				batch(0, c.warm)
				rss0, heap0, spans0 := settled(b, ".0")
				stored0 := requestsBytes(srv.Dir)
				batch(c.warm, c.n)
				rss1, heap1, spans1 := settled(b, "")
				rss, heap, spans, stored := rss1-rss0, heap1-heap0, spans1-spans0, requestsBytes(srv.Dir)-stored0
				b.ReportMetric(rss/stored, "rss-bytes/stored-byte")
				b.ReportMetric(heap/stored, "heap-bytes/stored-byte")
				b.ReportMetric(spans/stored, "spans-bytes/stored-byte")
				b.ReportMetric(stored/float64(c.n), "stored-bytes/request")
				srv.Stop()
			}
		})
	}
}

// windows is how long nats-server keeps what recent messages leave
// behind, whatever the number of requests held: the events' and audit's
// dedup windows (2 minutes; about 120 bytes per id), the file stores'
// per-subject caches of a block. A figure read sooner counted them, and
// moved with how fast the machine submitted the batch.
const windows = 2*time.Minute + 10*time.Second

// settled returns the process's resident memory, live heap and heap
// spans in use after a full collection that returns the freed pages to
// the OS, once the server has taken in what the last requests left in
// flight (the outbox, the watchers, the audit writer) and what recent
// messages hold has lapsed (windows): read every half second until the
// live heap stops moving. With HEAPPROF set, it then writes a heap
// profile to $HEAPPROF+suffix.
func settled(b *testing.B, suffix string) (rss, heap, spans float64) {
	time.Sleep(windows)
	for range 40 {
		prev := heap
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap, spans, rss = float64(m.HeapAlloc), float64(m.HeapInuse), vmRSS(b)
		if prev > 0 && math.Abs(heap-prev) < prev/100 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if name := os.Getenv("HEAPPROF"); name != "" {
		f, err := os.Create(name + suffix)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	return rss, heap, spans
}

// vmRSS reads the process's resident memory from /proc/self/status.
func vmRSS(b *testing.B) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb << 10)
		}
	}
	b.Skip("no VmRSS in /proc/self/status")
	return 0
}

// requestsBytes sums the message blocks (*.blk: the records with their
// headers and the per-message overhead) of the requests bucket's stream
// under the data directory dir; not its index.db, which nats-server
// rewrites on a timer (it made a batch's figure differ by 10%).
func requestsBytes(dir string) float64 {
	var n float64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".blk") ||
			!strings.Contains(path, string(filepath.Separator)+"KV_requests"+string(filepath.Separator)) {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += float64(info.Size())
		}
		return nil
	})
	return n
}
