package busapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/countersign/countersign/approvals"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// encode is the JSON of v exactly as the HTTP API writes it.
func encode(v any) []byte {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return nil
	}
	return b.Bytes()
}

// success is a reply carrying the HTTP response body and Status.
func success(status int, body any) *nats.Msg {
	h := nats.Header{}
	h.Set("Status", strconv.Itoa(status))
	h.Set("Content-Type", "application/json")
	return &nats.Msg{Header: h, Data: encode(body)}
}

// problemHeaders are the headers of an error reply besides micro's two.
func problemHeaders(p approvals.Problem) nats.Header {
	h := nats.Header{}
	h.Set("Content-Type", "application/problem+json")
	if p.Retryable() {
		h.Set("Retry-After", "1")
	}
	return h
}

// refuse answers a message refused before its operation started, through
// micro so that the service's stats count it.
func (s *Server) refuse(req micro.Request, op string, err error) {
	p := approvals.ProblemFor(err)
	s.served.WithLabelValues(op, strconv.Itoa(p.Status)).Inc()
	if e := req.Error(strconv.Itoa(p.Status), p.Error, encode(p), micro.WithHeaders(micro.Headers(problemHeaders(p)))); e != nil {
		s.log.Debug("bus api reply", "err", e)
	}
}

// fail answers a failed operation with its problem (Nats-Service-Error-Code
// the HTTP status, Nats-Service-Error the problem's error).
func (s *Server) fail(req micro.Request, op string, err error) {
	p := approvals.ProblemFor(err)
	s.served.WithLabelValues(op, strconv.Itoa(p.Status)).Inc()
	if p.Status >= http.StatusInternalServerError {
		s.log.Warn("bus api request failed", "op", op, "err", err)
	}
	h := problemHeaders(p)
	h.Set(micro.ErrorCodeHeader, strconv.Itoa(p.Status))
	h.Set(micro.ErrorHeader, p.Error)
	s.publish(req.Reply(), &nats.Msg{Header: h, Data: encode(p)})
}

// publish sends a reply from an operation's own goroutine (micro's
// Respond is for the handler's goroutine: it records the outcome for the
// stats unsynchronised).
func (s *Server) publish(reply string, m *nats.Msg) {
	m.Subject = reply
	if err := s.nc.PublishMsg(m); err != nil {
		s.log.Debug("bus api reply", "err", err)
	}
}
