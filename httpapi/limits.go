package httpapi

import (
	"time"

	"github.com/countersign/countersign/approvals"
)

// Timeouts bound each HTTP connection (the http.Server fields of the same
// names). Long-polls add their wait to Write; event streams apply Write to
// each write; once a request's body is read, Read no longer applies (the
// handler's time is bounded by Write).
type Timeouts struct {
	// ReadHeader bounds reading a request's headers. Default 10s.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included. Default 30s.
	Read time.Duration
	// Write bounds handling a request and writing the answer. Default 2m.
	Write time.Duration
	// Idle closes a kept-alive connection without a request. Default 2m.
	Idle time.Duration
}

func (t *Timeouts) setDefaults() {
	for _, d := range []struct {
		f   *time.Duration
		def time.Duration
	}{{&t.ReadHeader, 10 * time.Second}, {&t.Read, 30 * time.Second}, {&t.Write, 2 * time.Minute}, {&t.Idle, 2 * time.Minute}} {
		if *d.f <= 0 {
			*d.f = d.def
		}
	}
}

// connBound is MaxConnections as given (default: the long-polls approvals
// holds by default plus ConnHeadroom), lowered so that the connections,
// the spare ones and a tenth of the open-file limit (for NATS and its
// files) fit under that limit: file descriptors never run out for the
// health checks.
func connBound(configured, fileLimit int) int {
	n := configured
	if n <= 0 {
		n = approvals.DefaultMaxLongPolls + ConnHeadroom
	}
	if fileLimit > 0 {
		n = min(n, max(fileLimit-fileLimit/10-SpareConnections, 1))
	}
	return n
}
