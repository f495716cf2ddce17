package outbox

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
)

// People's workers on the bus (SPEC §9): each change of a request tells
// the people it concerns, on countersign.<tenant>.people.<person>, a
// review.requested when it comes to wait on them (data: the person's
// review bundle) and a review.withdrawn when it stops ({"request_id",
// "status"}). These are core NATS messages, at most once: the outbox
// sends them after it republished the change's event for the first time
// (a redelivered change finds its event a duplicate and tells nobody
// again) and after its ack of the state message is confirmed (so no
// process gets the change again). The inbox (api.list) stays the truth.

// peopleMsgs are the messages a stored change c (headers h, record data)
// sends to people's subjects; none when it concerns no person. The people
// an approver stands for, and those a request still waits on, are the
// tenant's (events.Tenant.People, Awaiting: a group's members less those
// whose allow is counted).
func (o *Worker) peopleMsgs(h nats.Header, data []byte, c events.Change) []*nats.Msg {
	was, _ := events.ParseWorkTo(h.Get(events.HeaderWasTo))
	_, toOK := events.ParseWorkTo(h.Get(events.HeaderWorkTo))
	t, ok := o.views.Tenant(c.Tenant)
	if (was.Kind == "" && !toOK) || !ok {
		return nil // a grant's change, or one that waits on nobody
	}
	var pr peopleRecord
	if json.Unmarshal(data, &pr) != nil {
		return nil
	}
	r := pr.request()
	still := t.Awaiting(&r) // nil once decided, or on an agent
	before := countedBefore(&r, c.Type)
	var now []events.MemberID
	if toOK && len(before) == len(r.Approvals) && !o.superseded(&r) { // new work, not one more allow counted
		now = still
	}
	tp := h.Get("ce-traceparent")
	var out []*nats.Msg
	for _, m := range t.People(was) {
		if !slices.Contains(still, m) && !before.By(events.Ref{Kind: events.KindPerson, ID: string(m)}) {
			out = appendPeopleMsg(out, &r, m, events.TypeReviewWithdrawn, tp,
				encodeData(events.ReviewWithdrawn{RequestID: r.ID, Status: r.Status}))
		}
	}
	for _, m := range now {
		out = appendPeopleMsg(out, &r, m, events.TypeReviewRequested, tp, personReview(data, m))
	}
	return out
}

// peopleRecord is what peopleMsgs reads of a stored record: decoding only
// these fields skips the rest, which a review.requested carries as stored.
type peopleRecord struct {
	ID        events.RequestID `json:"id"`
	Tenant    events.TenantID  `json:"tenant"`
	Status    events.Status    `json:"status"`
	Approver  *events.Ref      `json:"approver"`
	Revision  uint64           `json:"revision"`
	Approvals events.Approvals `json:"approvals"`
	Decision  *struct {
		By events.Ref `json:"by"`
	} `json:"decision"`
}

// request is the record with only p's fields set.
func (p *peopleRecord) request() events.Request {
	r := events.Request{ID: p.ID, Tenant: p.Tenant, Status: p.Status, Approver: p.Approver, Revision: p.Revision, Approvals: p.Approvals}
	if p.Decision != nil {
		r.Decision = &events.Decision{By: p.Decision.By}
	}
	return r
}

// personReview is the data of a review.requested for person m, an
// events.PersonReviewBundle whose request is record's text as stored (as
// the change's event carries it), not encoded again; nil if m's reference
// does not encode.
func personReview(record []byte, m events.MemberID) []byte {
	decider := encodeData(events.Ref{ID: string(m), Kind: events.KindPerson})
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
func countedBefore(r *events.Request, typ string) events.Approvals {
	a := r.Approvals
	if n := len(a); n > 0 && (typ == events.TypeRequestUpdated ||
		(typ == events.TypeRequestDecided && r.Decision != nil && a[n-1].By == r.Decision.By)) {
		return a[:n-1]
	}
	return a
}

// superseded reports whether this process's mirror already holds a later
// revision of r (a change redelivered late): its review is stale.
func (o *Worker) superseded(r *events.Request) bool {
	m, _, ok := o.views.Requests().Held(kvstate.RequestKey(r.Tenant, r.ID))
	return ok && m.Revision > r.Revision
}

// appendPeopleMsg appends the binary-mode CloudEvent typ with data to
// person m's subject; an event whose data did not encode (nil) is left out.
func appendPeopleMsg(out []*nats.Msg, r *events.Request, m events.MemberID, typ, traceparent string, data []byte) []*nats.Msg {
	if data == nil {
		return out
	}
	msg := &nats.Msg{Subject: events.PeopleSubject(r.Tenant, m), Data: data, Header: make(nats.Header, 12)}
	events.ChangeHeaders(msg.Header, typ, r.Tenant, string(r.ID), r.Revision, time.Now(), traceparent)
	return append(out, msg)
}
