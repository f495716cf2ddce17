package adapter

import (
	"net/http"
	"sync"
	"time"
)

// serverClock estimates the server's clock from the Date headers of one
// call's answers. The Date of an answer was stamped after its request left
// (local time sent) and is truncated to the second, so server - local is
// below Date + 1s - sent. The estimate keeps the smallest such bound: the
// latest the server's clock can be, so an approval is never judged valid
// when the server could already hold it expired (it may be judged expired up
// to about a second early). Without any Date it is the local clock.
type serverClock struct {
	now   func() time.Time
	mu    sync.Mutex
	known bool
	hi    time.Duration
}

func newServerClock(now func() time.Time) *serverClock { return &serverClock{now: now} }

// observe records one answer's Date header, sent being when its request
// left by the local clock.
func (s *serverClock) observe(sent time.Time, date string) {
	d, err := http.ParseTime(date)
	if err != nil {
		return
	}
	bound := d.Add(time.Second).Sub(sent)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.known || bound < s.hi {
		s.known, s.hi = true, bound
	}
}

// serverNow is the latest the server's clock can read now.
func (s *serverClock) serverNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now().Add(s.hi)
}

// until is how long from now until t on the server's clock.
func (s *serverClock) until(t time.Time) time.Duration { return t.Sub(s.serverNow()) }
