package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// item is one stored event on its way to one endpoint.
type item struct {
	seq  uint64 // stream sequence of the write that carried it
	key  string // the request's or grant's subject: events of one key go in order
	rev  uint64 // ce-revision
	id   string // ce-id: the webhook-id
	typ  string
	at   time.Time // ce-time: the event's age bounds its retries
	head nats.Header
	data []byte
	// failed is set once an attempt failed (the item is in the retry
	// backlog); guarded by the feed's mutex.
	failed bool
	done   func() // called once it is delivered or dropped
}

// newItem reads a stored write; ok is false for a write without an event
// (delete and purge markers) or with unreadable attributes.
func newItem(seq uint64, subject string, h nats.Header, data []byte) (*item, bool) {
	if h.Get("ce-type") == "" {
		return nil, false
	}
	ce, err := events.DecodeHeaders(h)
	if err != nil {
		return nil, false
	}
	return &item{seq: seq, key: subject, rev: events.EventRevision(ce), id: ce.ID(), typ: ce.Type(), at: ce.Time(), head: h, data: data}, true
}

// body builds what endpoint e receives for it: the structured-mode
// CloudEvent (made by the CloudEvents SDK), or the Slack message. The data
// of a request waiting on a person gets its decision links; a Slack
// message names people by names.
func (it *item) body(e *Endpoint, l *Links, names Names) (contentType string, body []byte, err error) {
	var r *domain.Request
	if strings.HasPrefix(events.ShortType(it.typ), "request.") {
		r = new(domain.Request)
		if err := json.Unmarshal(it.data, r); err != nil {
			return "", nil, fmt.Errorf("notify: event %s: %w", it.id, err)
		}
	}
	var pair *Pair
	if r != nil {
		pair = l.For(r)
	}
	if e.Format == FormatSlack {
		b, err := slackMessage(it.typ, r, e.Interactive, pair, names)
		return "application/json", b, err
	}
	var people map[domain.MemberID]*Pair
	if r != nil {
		people = l.ForPeople(r)
	}
	b, err := cloudEvent(it, pair, people)
	return "application/cloudevents+json", b, err
}

// cloudEvent encodes the stored event in structured mode, its data as
// stored plus "links" when there are any. A request waiting on a group gets, as "links_by_person", the links of
// each person it still waits on (SPEC §12: each is told, and answers
// through their own link).
func cloudEvent(it *item, pair *Pair, people map[domain.MemberID]*Pair) ([]byte, error) {
	ce, err := events.DecodeHeaders(it.head)
	if err != nil {
		return nil, err
	}
	data := it.data
	if pair != nil {
		if data, err = withLinks(data, pair); err != nil {
			return nil, err
		}
	}
	if people != nil {
		if data, err = withMember(data, "links_by_person", people); err != nil {
			return nil, err
		}
	}
	// The data as stored: SetData would encode it again, HTML-escaped.
	ce.SetDataContentType("application/json")
	ce.DataEncoded, ce.DataBase64 = data, false
	return ce.MarshalJSON()
}

// withLinks adds "links" as the last member of the JSON object data.
func withLinks(data []byte, pair *Pair) ([]byte, error) {
	return withMember(data, "links", pair)
}

// withMember adds key: v as the last member of the JSON object data.
func withMember(data []byte, key string, v any) ([]byte, error) {
	obj := bytes.TrimSpace(data)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("notify: event data is not a JSON object")
	}
	l, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(append(append(out, '"'), key...), `":`...)
	out = append(append(out, l...), '}')
	return out, nil
}
