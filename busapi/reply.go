package busapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/problem"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// encode is the JSON of v exactly as the HTTP API writes it.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as over HTTP: the data as stored, not 6x its size
	if err := enc.Encode(v); err != nil {
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
func problemHeaders(p problem.Problem) nats.Header {
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
	p := problem.From(err)
	s.served.WithLabelValues(op, strconv.Itoa(p.Status)).Inc()
	if e := req.Error(strconv.Itoa(p.Status), p.Error, encode(p), micro.WithHeaders(micro.Headers(problemHeaders(p)))); e != nil {
		s.log.Debug("bus api reply", "err", e)
	}
}

// fail answers a failed operation with its problem (Nats-Service-Error-Code
// the HTTP status, Nats-Service-Error the problem's error).
func (s *Server) fail(req micro.Request, op string, err error) {
	s.failTo(req.Reply(), op, err)
}

// failTo publishes err's problem to reply, as fail does.
func (s *Server) failTo(reply, op string, err error) {
	p := problem.From(err)
	s.served.WithLabelValues(op, strconv.Itoa(p.Status)).Inc()
	if p.Status >= http.StatusInternalServerError {
		s.log.Warn("bus api request failed", "op", op, "err", err)
	}
	h := problemHeaders(p)
	h.Set(micro.ErrorCodeHeader, strconv.Itoa(p.Status))
	h.Set(micro.ErrorHeader, p.Error)
	s.publish(reply, &nats.Msg{Header: h, Data: encode(p)})
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

// Codes countersign_bus_requests_total counts an unanswered message under:
// its token does not authenticate and its reply subject is no inbox of
// its tenant (401), or its reply subject is not the caller's inbox (403).
const (
	noCallerCode = "401"
	dropCode     = "403"
)

// inbox reports whether reply is a literal subject below prefix.
func inbox(reply, prefix string) bool {
	rest, ok := strings.CutPrefix(reply, prefix+".")
	if !ok {
		return false
	}
	for _, tok := range strings.Split(rest, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return false
		}
	}
	return true
}

// drop counts and logs a message refused with errNoCaller or
// errForeignReply, and publishes nothing: an answer would be a reply
// forged into someone else's request, or a message on any subject
// countersign's own connection may publish to.
func (s *Server) drop(subject, reply, op string, c approvals.Caller, err error) {
	if errors.Is(err, errNoCaller) {
		s.served.WithLabelValues(op, noCallerCode).Inc()
		s.log.Warn("bus api message not answered: its token does not authenticate and its reply subject is no inbox of the tenant",
			"op", op, "subject", subject, "reply", reply)
		return
	}
	s.served.WithLabelValues(op, dropCode).Inc()
	caller := "unauthenticated"
	if c.Tenant != nil {
		caller = string(c.Tenant.ID) + "/" + c.Principal.Kind + ":" + c.Principal.ID
	}
	s.log.Warn("bus api message not answered: its reply subject is not the caller's inbox",
		"op", op, "subject", subject, "reply", reply, "caller", caller)
}
