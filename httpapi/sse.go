package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/countersign/countersign/approvals"
)

// sseHeartbeat keeps idle event streams open through proxies.
const sseHeartbeat = 15 * time.Second

// events serves GET /v1/events: Server-Sent Events of the approval events
// the caller may see. Each event's id is the change's own id (its
// Nats-Msg-Id: <request id>:<revision>, <grant id>:created|revoked); a
// client that reconnects with Last-Event-ID (or ?last_event_id=) resumes
// right after it, across restarts of countersign and of NATS. An id that
// names no change the caller may see starts the stream from now, and the
// stream says so in a comment line first.
func (a *API) events(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpEvents)
	if err != nil {
		return err
	}
	last := lastEventID(r)
	from, found, err := a.svc.EventsAfter(r.Context(), c, last)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	// The head goes out by Flush, not Write: it gets its write timeout
	// afresh too, or a slow EventsAfter spends the one the request began
	// with, and the stream closes before its head (seen as EOF).
	_ = rc.SetWriteDeadline(time.Now().Add(a.timeouts.Write))
	w = &deadlineWriter{ResponseWriter: w, rc: rc, timeout: a.timeouts.Write}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if last != "" && !found {
		_, _ = fmt.Fprint(w, ": Last-Event-ID not found; events from now\n\n")
	}
	_ = rc.Flush()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go a.closeOnShutdown(ctx, cancel)
	var mu sync.Mutex // the heartbeat and the events share the writer
	go heartbeat(ctx, &mu, w, rc)
	_ = a.svc.Events(ctx, c, from, func(ev approvals.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, ev.JSON); err != nil {
			return err
		}
		return rc.Flush()
	})
	return nil
}

func lastEventID(r *http.Request) string {
	if s := r.Header.Get("Last-Event-ID"); s != "" {
		return s
	}
	return r.URL.Query().Get("last_event_id")
}

func (a *API) closeOnShutdown(ctx context.Context, cancel context.CancelFunc) {
	select {
	case <-a.closing:
		cancel()
	case <-ctx.Done():
	}
}

func heartbeat(ctx context.Context, mu *sync.Mutex, w http.ResponseWriter, rc *http.ResponseController) {
	t := time.NewTicker(sseHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			mu.Lock()
			_, err := fmt.Fprint(w, ": keepalive\n\n")
			if err == nil {
				err = rc.Flush()
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// deadlineWriter gives each write of an event stream the server's write
// timeout afresh: the stream lasts as long as the client reads it.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.ResponseWriter.Write(p)
}
