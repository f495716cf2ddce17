package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// SpareConnections are accepted past MaxConnections for health checks:
// /healthz, /readyz and /metrics are served on them, other requests get
// 429 RateLimited, and each closes after one answer.
const SpareConnections = 32

// ConnHeadroom is what the default MaxConnections adds to the long-polls
// a process may hold, for the requests that do not wait.
const ConnHeadroom = 1000

// NewServer returns the http.Server for the API, with its timeouts, and
// ln bounded to MaxConnections (plus SpareConnections); connections past
// both are closed at once.
func (a *API) NewServer(ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           a,
		ReadHeaderTimeout: a.timeouts.ReadHeader,
		ReadTimeout:       a.timeouts.Read,
		WriteTimeout:      a.timeouts.Write,
		IdleTimeout:       a.timeouts.Idle,
		ConnContext:       markSpare,
	}
	return srv, &boundedListener{Listener: ln, max: int64(a.maxConns), spare: SpareConnections}
}

// boundedListener counts open connections; see NewServer.
type boundedListener struct {
	net.Listener
	max, spare int64
	open       atomic.Int64
}

// Accept returns the next connection within the bound, closing those past
// it.
func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		n := l.open.Add(1)
		if n <= l.max+l.spare {
			return &boundedConn{Conn: c, l: l, spare: n > l.max}, nil
		}
		l.open.Add(-1)
		_ = c.Close()
	}
}

type boundedConn struct {
	net.Conn
	l     *boundedListener
	spare bool
	once  sync.Once
}

// CloseWrite keeps net/http's half-close (it lets a client read a 413
// before the connection resets).
func (c *boundedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *boundedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

type spareKey struct{}

// markSpare tags the requests of a spare connection (http.Server.ConnContext).
func markSpare(ctx context.Context, c net.Conn) context.Context {
	if bc, ok := c.(*boundedConn); ok && bc.spare {
		return context.WithValue(ctx, spareKey{}, true)
	}
	return ctx
}

// onSpare reports whether r came on a spare connection.
func onSpare(r *http.Request) bool {
	spare, _ := r.Context().Value(spareKey{}).(bool)
	return spare
}

// probePaths are served on spare connections.
var probePaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// serveSpare answers a request on a spare connection, and closes it after.
// It returns false if the request may go on to the API.
func serveSpare(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Connection", "close")
	if probePaths[r.URL.Path] {
		return false
	}
	writeProblem(w, errTooManyConns.Problem())
	return true
}
