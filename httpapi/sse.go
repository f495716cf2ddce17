package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// sseHeartbeat keeps idle event streams open through proxies.
const sseHeartbeat = 15 * time.Second

// events serves GET /v1/events: Server-Sent Events of the approval events
// the caller may see. Each event's id is its position in the events stream;
// a client that reconnects with Last-Event-ID resumes right after it.
func (a *API) events(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, events.ScopeApprovalsRead)
	if err != nil {
		return err
	}
	after, err := lastEventID(r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	w = &deadlineWriter{ResponseWriter: w, rc: rc, timeout: a.timeouts.Write}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go a.closeOnShutdown(ctx, cancel)
	var mu sync.Mutex // the heartbeat and the events share the writer
	go heartbeat(ctx, &mu, w, rc)
	_ = a.svc.Events(ctx, c, after, func(ev approvals.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, ev.JSON); err != nil {
			return err
		}
		return rc.Flush()
	})
	return nil
}

func lastEventID(r *http.Request) (uint64, error) {
	s := r.Header.Get("Last-Event-ID")
	if s == "" {
		s = r.URL.Query().Get("last_event_id")
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, badRequest("Last-Event-ID", "not an event id this server sent")
	}
	return n, nil
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
