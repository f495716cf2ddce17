package views

import (
	"strconv"

	"github.com/countersign/countersign/domain"
)

// Replay's fast path. At start the request mirror reads every stored
// record; a terminal one is kept only as its summary and index keys, so
// only a few fields matter. scanTerminal finds them in one pass over the
// stored JSON (which this package wrote with encoding/json), skipping
// every other value without decoding it. A value it does not expect (a
// string with escapes, say) makes it give up, and the record is decoded
// with encoding/json instead: slower, never different
// (TestScanTerminalMatchesDecode).

// scanTerminal returns the fields peekRequest needs of a stored request.
func scanTerminal(data []byte) (p peekedRequest, ok bool) {
	ok = scanObject(data, func(key []byte, v []byte) bool {
		var ok bool
		switch string(key) {
		case "tenant":
			p.Tenant, ok = textOf[domain.TenantID](v)
		case "agent":
			p.Agent, ok = textOf[domain.AgentID](v)
		case "status":
			p.Status, ok = textOf[domain.Status](v)
		case "revision":
			var err error
			p.Revision, err = strconv.ParseUint(string(v), 10, 64)
			ok = err == nil
		case "decision":
			ok = scanDecision(v, &p)
		case "approver":
			p.Approver, ok = scanApprover(v)
		case "endorsements":
			p.Endorsements, ok = scanAgents(v)
		case "abstentions":
			p.Abstentions, ok = scanAgents(v)
		case "approvals":
			p.Approvals, ok = scanList(v, scanApproval)
		default:
			ok = true
		}
		return ok
	})
	return p, ok
}

// scanDecision reads a decision's status and by.
func scanDecision(v []byte, p *peekedRequest) bool {
	if string(v) == "null" {
		return true
	}
	p.Decision = &peekedDecision{}
	d := p.Decision
	return scanObject(v, func(key []byte, v []byte) bool {
		var ok bool
		switch string(key) {
		case "status":
			d.Status, ok = textOf[domain.Status](v)
		case "by":
			ok = scanRef(v, &d.By)
		default:
			ok = true
		}
		return ok
	})
}

// scanApprover reads the approver: null, or a ref.
func scanApprover(v []byte) (*domain.Ref, bool) {
	if string(v) == "null" {
		return nil, true
	}
	var r domain.Ref
	return &r, scanRef(v, &r)
}

// scanRef reads a {kind, id} object into r.
func scanRef(v []byte, r *domain.Ref) bool {
	return scanObject(v, func(key []byte, v []byte) bool {
		var ok bool
		switch string(key) {
		case "kind":
			r.Kind, ok = textOf[string](v)
		case "id":
			r.ID, ok = textOf[string](v)
		default:
			ok = true
		}
		return ok
	})
}

// scanAgents reads the agents of a list of endorsements or abstentions.
func scanAgents(v []byte) ([]peekedAgent, bool) {
	return scanList(v, func(elem []byte) (peekedAgent, bool) {
		var a peekedAgent
		ok := scanObject(elem, func(key []byte, v []byte) bool {
			if string(key) != "agent" {
				return true
			}
			var ok bool
			a.Agent, ok = textOf[domain.AgentID](v)
			return ok
		})
		return a, ok
	})
}

// scanApproval reads the by of an approval.
func scanApproval(elem []byte) (peekedAgent, bool) {
	var a peekedAgent
	ok := scanObject(elem, func(key []byte, v []byte) bool {
		if string(key) != "by" {
			return true
		}
		return scanObject(v, func(key []byte, v []byte) bool {
			var ok bool
			switch string(key) {
			case "kind":
				a.By.Kind, ok = textOf[string](v)
			case "id":
				a.By.ID, ok = textOf[string](v)
			default:
				ok = true
			}
			return ok
		})
	})
	return a, ok
}

// scanList reads each element of the JSON array v with elem.
func scanList(v []byte, elem func([]byte) (peekedAgent, bool)) ([]peekedAgent, bool) {
	if string(v) == "null" {
		return nil, true
	}
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	out := []peekedAgent{}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return out, skipSpace(v, i+1) == len(v)
	}
	for i < len(v) {
		end, ok := skipValue(v, i)
		if !ok {
			return nil, false
		}
		a, ok := elem(v[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, a)
		i = skipSpace(v, end)
		switch {
		case i < len(v) && v[i] == ',':
			i = skipSpace(v, i+1)
		case i < len(v) && v[i] == ']':
			return out, skipSpace(v, i+1) == len(v)
		default:
			return nil, false
		}
	}
	return nil, false
}

// scanObject calls fn with each member of the JSON object data (the key
// without escapes, the raw value, both slices of data), in order, until fn
// returns false; it reports whether data was one whole object and fn
// accepted every member.
func scanObject(data []byte, fn func(key, v []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for i < len(data) {
		key, next, ok := plainBytes(data, i)
		if !ok {
			return false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		start := skipSpace(data, i+1)
		end, ok := skipValue(data, start)
		if !ok || !fn(key, data[start:end]) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
	return false
}

// textOf reads a JSON string without escapes as a T, interned (the
// tenants, agents, statuses and deciders a million records name are a
// handful of strings); false otherwise (an escaped one is left to
// encoding/json).
func textOf[T ~string](v []byte) (T, bool) {
	if len(v) == 4 && string(v) == "null" {
		return "", true
	}
	b, end, ok := plainBytes(v, 0)
	if !ok || end != len(v) {
		return "", false
	}
	return T(internBytes(b)), true
}

// plainBytes reads the JSON string at data[i] when it has no escapes,
// returning its contents (a slice of data) and the index after its
// closing quote.
func plainBytes(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// skipValue returns the index just after the JSON value starting at i.
// It checks only what it needs to find the end; the value's contents are
// validated by whoever decodes them (or were written by encoding/json).
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, ok := skipString(data, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default: // a number, true, false or null
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' && !isSpace(data[j]) {
			j++
		}
		return j, j > i
	}
}

// skipString returns the index after the JSON string starting at data[i].
func skipString(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
