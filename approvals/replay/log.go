package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// Source reads a tenant's audit log from its first entry, in order,
// calling fn with each exported line (SPEC §14); each call reads anew.
// An error from fn ends it and is returned.
type Source func(fn func(line []byte) error) error

// readHistory reads the agents, grants and kept rules of the whole log.
func readHistory(src Source) (*history, error) {
	h := newHistory()
	err := src(func(line []byte) error {
		if typ, ok := typeOf(line); ok && !historyType[typ] {
			return nil // a request's entry: the second read's
		}
		var e audit.Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("replay: an audit line is no entry: %w", err)
		}
		return h.apply(&e)
	})
	return h, err
}

func (h *history) apply(e *audit.Entry) error {
	switch e.Type {
	case events.TypeGrantCreated, events.TypeGrantRevoked:
		var g domain.Grant
		if err := json.Unmarshal(e.Data, &g); err != nil {
			return fmt.Errorf("replay: entry %d: grant: %w", e.Seq, err)
		}
		h.grant(g)
	case events.TypeAgentRegistered, events.TypeAgentRetired:
		var a domain.Agent
		if err := json.Unmarshal(e.Data, &a); err != nil {
			return fmt.Errorf("replay: entry %d: agent: %w", e.Seq, err)
		}
		h.agents[a.ID] = &agentSpan{agent: a}
	case events.TypeAgentRemoved:
		if sp, ok := h.agents[domain.AgentID(e.Subject)]; ok {
			at := e.At
			sp.removedAt = &at
		}
	case events.TypeRulePut, events.TypeRuleDeleted:
		return h.rule(e)
	}
	return nil
}

func (h *history) rule(e *audit.Entry) error {
	var r domain.Rule
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return fmt.Errorf("replay: entry %d: rule: %w", e.Seq, err)
	}
	spans := h.rules[r.Agent]
	for i := range spans {
		if spans[i].rule.ID == r.ID && spans[i].deletedAt == nil {
			at := e.At
			spans[i].deletedAt = &at // replaced or deleted
		}
	}
	if e.Type == events.TypeRulePut {
		spans = append(spans, ruleSpan{rule: r, from: e.At})
	}
	h.rules[r.Agent] = spans
	return nil
}

// historyType are the entry types readHistory keeps.
var historyType = map[string]bool{
	events.TypeGrantCreated: true, events.TypeGrantRevoked: true, events.TypeAgentRegistered: true,
	events.TypeAgentRetired: true, events.TypeAgentRemoved: true, events.TypeRulePut: true, events.TypeRuleDeleted: true,
}

// typeOf reads an exported line's type without decoding it: the line is
// an entry's RFC 8785 form, whose members sort, so "type" is its last.
// ok is false for a line not in that form.
func typeOf(line []byte) (string, bool) {
	const key = `,"type":"`
	i := bytes.LastIndex(line, []byte(key))
	if i < 0 || !bytes.HasSuffix(bytes.TrimRight(line, " \r\n"), []byte(`"}`)) {
		return "", false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || !bytes.HasPrefix(rest[j+1:], []byte("}")) {
		return "", false
	}
	return string(rest[:j]), true
}

// created is the entry of a request's creation in the window, decoded:
// request.created when it was left waiting, request.decided when steps
// 1–4 decided it, both at revision 0; the request as its creation's check
// order left it.
func created(line []byte, since, until time.Time) (*domain.Request, bool, error) {
	r, ok, err := requestEntry(line, since, until, events.TypeRequestCreated, events.TypeRequestDecided)
	return r, ok && r.Revision == 0, err // its creation: pending (created) or decided at once
}

// requestEntry decodes the request of line when line is an entry of one
// of types in the window [since, until] (until zero: no end).
func requestEntry(line []byte, since, until time.Time, types ...string) (*domain.Request, bool, error) {
	if typ, ok := typeOf(line); ok && !slices.Contains(types, typ) {
		return nil, false, nil
	}
	var e struct {
		Seq  uint64          `json:"seq"`
		At   time.Time       `json:"at"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, false, fmt.Errorf("replay: an audit line is no entry: %w", err)
	}
	if !slices.Contains(types, e.Type) || e.At.Before(since) || (!until.IsZero() && e.At.After(until)) {
		return nil, false, nil
	}
	var r domain.Request
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, false, fmt.Errorf("replay: entry %d: request: %w", e.Seq, err)
	}
	return &r, true, nil
}
