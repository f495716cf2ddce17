package busapi

import (
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/micro"
)

// op is one subject's operation: its endpoint in approvals, which holds
// every rule of it (Permit, the strict decode of the body, the use case,
// the result's shape). The bus only binds: a message's data is the body,
// whose fields carry what HTTP's path and query do ("id", "turn",
// "wait", a list's filter), and its headers are the call's.
type op struct {
	op  approvals.Op
	run approvals.Endpoint
}

// header is the first value of a header, its name matched in any case as
// in HTTP (NATS headers are case-sensitive; clients differ).
func header(h micro.Headers, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// table binds each subject's op to its endpoint.
func (s *Server) table() map[string]op {
	ops := map[string]approvals.Op{
		events.OpSubmit: approvals.OpSubmit, events.OpGet: approvals.OpGet, events.OpList: approvals.OpList,
		events.OpAnswer: approvals.OpAnswer, events.OpCancel: approvals.OpCancel, events.OpClaim: approvals.OpClaim,
		events.OpGrants: approvals.OpGrants, events.OpRevoke: approvals.OpRevoke,
	}
	out := make(map[string]op, len(ops))
	for name, o := range ops {
		out[name] = op{op: o, run: s.svc.Endpoint(o)}
	}
	return out
}

// input is a message as its endpoint's input.
func input(m micro.Request) approvals.Input {
	return approvals.Input{
		Body:   func() ([]byte, error) { return m.Data(), nil },
		Header: func(name string) string { return header(m.Headers(), name) },
	}
}
