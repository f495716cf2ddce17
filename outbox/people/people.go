package people

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/jcs"
	"github.com/nats-io/nats.go"
)

// Msgs are the messages a stored change c of tenant t (headers h, record
// data) sends to people's subjects; none when it concerns no person. The
// people an approver stands for, and those a request still waits on, are
// the tenant's (domain.Tenant.People, Awaiting: a group's members less
// those whose allow is counted). superseded reports whether a later
// revision of the request is already held (a change redelivered late):
// its review.requested is stale and is not sent. listens, when not nil,
// reports whether anyone is subscribed to a subject: a person nobody
// listens for gets no message (delivery is at most once), and a change
// that concerns only such people is not decoded.
func Msgs(t *domain.Tenant, h nats.Header, data []byte, c events.Change, superseded func(*domain.Request) bool, listens func(subject string) bool) []*nats.Msg {
	was, _ := events.ParseWorkTo(h.Get(events.HeaderWasTo))
	to, toOK := events.ParseWorkTo(h.Get(events.HeaderWorkTo))
	if was.Kind == "" && !toOK {
		return nil // a grant's change, or one that waits on nobody
	}
	heard := func(m domain.MemberID) bool { return listens == nil || listens(events.PeopleSubject(c.Tenant, m)) }
	if listens != nil && !slices.ContainsFunc(t.People(was), heard) && (!toOK || !slices.ContainsFunc(t.People(to), heard)) {
		return nil // the people it concerns (its approver's before and now) are not listening
	}
	var pr peopleRecord
	if pr.decode(data) != nil {
		return nil
	}
	r := pr.request()
	still := t.Awaiting(&r) // nil once decided, or on an agent
	before := countedBefore(&r, c.Type)
	var now []domain.MemberID
	if toOK && len(before) == len(r.Approvals) && !superseded(&r) { // new work, not one more allow counted
		now = still
	}
	tp := h.Get("ce-traceparent")
	var out []*nats.Msg
	for _, m := range t.People(was) {
		if heard(m) && !slices.Contains(still, m) && !before.By(domain.Ref{Kind: domain.KindPerson, ID: string(m)}) {
			out = appendPeopleMsg(out, &r, m, events.TypeReviewWithdrawn, tp,
				encodeData(domain.ReviewWithdrawn{RequestID: r.ID, Status: r.Status}))
		}
	}
	for _, m := range now {
		if !heard(m) {
			continue
		}
		out = appendPeopleMsg(out, &r, m, events.TypeReviewRequested, tp, personReview(data, m))
	}
	return out
}

// peopleRecord is what Msgs reads of a stored record: decoding only
// these fields skips the rest, which a review.requested carries as stored.
type peopleRecord struct {
	ID        domain.RequestID `json:"id"`
	Tenant    domain.TenantID  `json:"tenant"`
	Status    domain.Status    `json:"status"`
	Approver  *domain.Ref      `json:"approver"`
	Revision  uint64           `json:"revision"`
	Approvals domain.Approvals `json:"approvals"`
	Decision  *struct {
		By domain.Ref `json:"by"`
	} `json:"decision"`
}

// errNotRecord: stored data that is no JSON object.
var errNotRecord = errors.New("people: a stored record is no JSON object")

// decode reads p's members of the stored record data: one pass over its
// top-level members, decoding only p's, where json.Unmarshal of the
// whole record checked and skipped the rest (BenchmarkPeopleMsgs; the
// figures are in docs/operators/performance.md). data is a record
// as kvstate wrote it; data that is no object, or ends before its
// close, is refused.
func (p *peopleRecord) decode(data []byte) error {
	err := jcs.EachMember(data, p.member)
	if errors.Is(err, jcs.ErrNotObject) {
		return errNotRecord
	}
	return err
}

// decodeRef decodes the reference {"kind", "id"} v into r (nil: null).
func decodeRef(v []byte, r **domain.Ref) error {
	if string(v) == "null" {
		*r = nil
		return nil
	}
	ref := &domain.Ref{}
	err := jcs.EachMember(v, func(key, v []byte) error {
		switch string(key) {
		case "kind":
			return decodeString(v, &ref.Kind)
		case "id":
			return decodeString(v, &ref.ID)
		}
		return nil
	})
	*r = ref
	return err
}

// member decodes the value v of key into p, if p holds that member.
func (p *peopleRecord) member(key, v []byte) error {
	switch string(key) {
	case "id":
		return decodeString(v, (*string)(&p.ID))
	case "tenant":
		return decodeString(v, (*string)(&p.Tenant))
	case "status":
		return decodeString(v, (*string)(&p.Status))
	case "approver":
		return decodeRef(v, &p.Approver)
	case "revision":
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return json.Unmarshal(v, &p.Revision)
		}
		p.Revision = n
	case "approvals":
		if string(v) == "[]" {
			p.Approvals = domain.Approvals{}
			return nil
		}
		return json.Unmarshal(v, &p.Approvals)
	case "decision":
		if string(v) == "null" {
			p.Decision = nil
			return nil
		}
		p.Decision = &struct {
			By domain.Ref `json:"by"`
		}{}
		return jcs.EachMember(v, func(key, v []byte) error {
			if string(key) != "by" {
				return nil
			}
			var by *domain.Ref
			if err := decodeRef(v, &by); err != nil || by == nil {
				return err
			}
			p.Decision.By = *by
			return nil
		})
	}
	return nil
}

// decodeString decodes the JSON string v into s: as it is when it holds
// no escape, else by encoding/json.
func decodeString(v []byte, s *string) error {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0 && bytes.IndexByte(v[1:len(v)-1], '"') < 0 {
		*s = string(v[1 : len(v)-1])
		return nil
	}
	return json.Unmarshal(v, s)
}

// request is the record with only p's fields set.
func (p *peopleRecord) request() domain.Request {
	r := domain.Request{ID: p.ID, Tenant: p.Tenant, Status: p.Status, Approver: p.Approver, Revision: p.Revision, Approvals: p.Approvals}
	if p.Decision != nil {
		r.Decision = &domain.Decision{By: p.Decision.By}
	}
	return r
}

// personReview is the data of a review.requested for person m, an
// domain.PersonReviewBundle whose request is record's text as stored (as
// the change's event carries it), not encoded again; nil if m's reference
// does not encode.
func personReview(record []byte, m domain.MemberID) []byte {
	decider := encodeData(domain.Ref{ID: string(m), Kind: domain.KindPerson})
	if decider == nil {
		return nil
	}
	out := make([]byte, 0, len(record)+len(decider)+25)
	out = append(out, `{"request":`...)
	out = append(out, record...)
	out = append(out, `,"decider":`...)
	out = append(out, decider...)
	return append(out, '}')
}

// encodeData is v in JSON with the record's text as stored (no HTML
// escapes), as the events carry it; nil if it does not encode.
func encodeData(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// countedBefore are the allows r counted before change typ: those people
// heard review.withdrawn when theirs was counted. A change that counts an
// allow appends it last: one more allow of a group (updated), or the one
// that reached the quorum (decided, by that person).
func countedBefore(r *domain.Request, typ string) domain.Approvals {
	a := r.Approvals
	if n := len(a); n > 0 && (typ == events.TypeRequestUpdated ||
		(typ == events.TypeRequestDecided && r.Decision != nil && a[n-1].By == r.Decision.By)) {
		return a[:n-1]
	}
	return a
}

// appendPeopleMsg appends the binary-mode CloudEvent typ with data to
// person m's subject; an event whose data did not encode (nil) is left out.
func appendPeopleMsg(out []*nats.Msg, r *domain.Request, m domain.MemberID, typ, traceparent string, data []byte) []*nats.Msg {
	if data == nil {
		return out
	}
	msg := &nats.Msg{Subject: events.PeopleSubject(r.Tenant, m), Data: data, Header: make(nats.Header, 12)}
	events.ChangeHeaders(msg.Header, typ, r.Tenant, string(r.ID), r.Revision, time.Now(), traceparent)
	return append(out, msg)
}
