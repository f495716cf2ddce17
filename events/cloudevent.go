package events

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go"
)

// ceHeaderPrefix prefixes each CloudEvent attribute header in binary mode
// (CloudEvents NATS protocol binding 1.0.3, §3.1.3).
const ceHeaderPrefix = "ce-"

// NewEvent builds the CloudEvent for one change of a tenant's request or
// grant: id evt_<ULID>, source /countersign/<tenant>, subject the request or
// grant id, extensions tenant and revision (and traceparent when given).
func NewEvent(typ string, tenant domain.TenantID, subject string, revision uint64, at time.Time, traceparent string) cloudevents.Event {
	e := cloudevents.New(cloudevents.CloudEventsVersionV1)
	e.SetID(string(domain.NewEventID()))
	e.SetType(typ)
	e.SetSource(Source(tenant))
	e.SetSubject(subject)
	e.SetTime(at.UTC())
	e.SetDataContentType("application/json")
	e.SetExtension("tenant", string(tenant))
	e.SetExtension("revision", strconv.FormatUint(revision, 10))
	if traceparent != "" {
		e.SetExtension("traceparent", traceparent)
	}
	return e
}

// ChangeHeaders writes into h the headers EncodeHeaders writes for
// NewEvent(typ, tenant, subject, revision, at, traceparent), without
// building the event: the one durable write of every state change carries
// them, so this is on every write's path.
func ChangeHeaders(h nats.Header, typ string, tenant domain.TenantID, subject string, revision uint64, at time.Time, traceparent string) {
	vals := make([]string, 0, len(changeHeaderNames)+1) // one array for every value: a header's is a slice of it
	set := func(name, v string) {
		vals = append(vals, v)
		h[name] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	set(ceSpecversion, cloudevents.CloudEventsVersionV1)
	set(ceID, percentEncode(string(domain.NewEventID())))
	set(ceSource, percentEncode(Source(tenant)))
	set(ceType, percentEncode(typ))
	set(ceSubject, percentEncode(subject))
	set(ceTime, at.UTC().Format(time.RFC3339Nano))
	set(ceDataContentType, "application/json")
	set(ceTenant, percentEncode(string(tenant)))
	set(ceRevision, strconv.FormatUint(revision, 10))
	if traceparent != "" {
		set(ceTraceparent, percentEncode(traceparent))
	}
	set("Content-Type", "application/json")
}

// The header names ChangeHeaders writes, built once rather than for
// every write.
const (
	ceSpecversion     = ceHeaderPrefix + "specversion"
	ceID              = ceHeaderPrefix + "id"
	ceSource          = ceHeaderPrefix + "source"
	ceType            = ceHeaderPrefix + "type"
	ceSubject         = ceHeaderPrefix + "subject"
	ceTime            = ceHeaderPrefix + "time"
	ceDataContentType = ceHeaderPrefix + "datacontenttype"
	ceTenant          = ceHeaderPrefix + "tenant"
	ceRevision        = ceHeaderPrefix + "revision"
	ceTraceparent     = ceHeaderPrefix + "traceparent"
)

var changeHeaderNames = [...]string{ceSpecversion, ceID, ceSource, ceType, ceSubject, ceTime, ceDataContentType, ceTenant, ceRevision, ceTraceparent}

// Change is what the outbox reads of a stored change's CloudEvent to
// derive from it (PeekChange): where its event goes and its Nats-Msg-Id.
type Change struct {
	Type     string
	Tenant   domain.TenantID
	Subject  string
	Revision uint64 // 0 when missing or not a number, as EventRevision
}

// PeekChange reads a change's event attributes from binary-mode headers h
// without decoding the whole event. ok is false unless h carries an event
// as ChangeHeaders writes one: specversion 1.0, an id, a source, a type, a
// subject and a tenant.
func PeekChange(h nats.Header) (c Change, ok bool) {
	get := func(name string) string { // name one of the constants: no key is built
		vs := h[name]
		if len(vs) == 0 {
			return ""
		}
		v, err := percentDecode(vs[0])
		if err != nil {
			return ""
		}
		return v
	}
	if get(ceSpecversion) != cloudevents.CloudEventsVersionV1 || get(ceID) == "" || get(ceSource) == "" {
		return c, false
	}
	c = Change{Type: get(ceType), Tenant: domain.TenantID(get(ceTenant)), Subject: get(ceSubject)}
	c.Revision, _ = strconv.ParseUint(get(ceRevision), 10, 64)
	return c, c.Type != "" && c.Subject != "" && c.Tenant != ""
}

// MsgID is the change's Nats-Msg-Id, as EventMsgID.
func (c Change) MsgID() string {
	switch c.Type {
	case TypeGrantCreated, TypeGrantRevoked:
		return GrantMsgID(domain.GrantID(c.Subject), c.Type == TypeGrantRevoked)
	}
	return MsgID(domain.RequestID(c.Subject), c.Revision)
}

// CopyEventHeaders copies the CloudEvent headers of a stored change (its
// ce- attributes and Content-Type) from src into dst, as they are.
func CopyEventHeaders(dst, src nats.Header) {
	for k, vs := range src {
		if k == "Content-Type" || strings.HasPrefix(k, ceHeaderPrefix) {
			dst[k] = vs
		}
	}
}

// EncodeHeaders writes the attributes of e into h in binary content mode:
// each attribute a ce-<name> header, its value percent-encoded.
func EncodeHeaders(e cloudevents.Event, h nats.Header) error {
	if err := e.Validate(); err != nil {
		return fmt.Errorf("events: invalid cloudevent: %w", err)
	}
	set := func(name, v string) { h.Set(ceHeaderPrefix+name, percentEncode(v)) }
	set("specversion", e.SpecVersion())
	set("id", e.ID())
	set("source", e.Source())
	set("type", e.Type())
	set("subject", e.Subject())
	set("time", e.Time().UTC().Format(time.RFC3339Nano))
	set("datacontenttype", e.DataContentType())
	for name, v := range e.Extensions() {
		set(name, fmt.Sprint(v))
	}
	h.Set("Content-Type", e.DataContentType())
	return nil
}

// DecodeHeaders reads the CloudEvent attributes from binary-mode headers.
// The data is the message payload and is not read here.
func DecodeHeaders(h nats.Header) (cloudevents.Event, error) {
	e := cloudevents.New(cloudevents.CloudEventsVersionV1)
	for k, vs := range h {
		name := strings.ToLower(k)
		if !strings.HasPrefix(name, ceHeaderPrefix) || len(vs) == 0 {
			continue
		}
		v, err := percentDecode(vs[0])
		if err != nil {
			return e, err
		}
		if err := setAttr(&e, strings.TrimPrefix(name, ceHeaderPrefix), v); err != nil {
			return e, err
		}
	}
	return e, e.Validate()
}

// EventTenant is the tenant extension of an event NewEvent made.
func EventTenant(e cloudevents.Event) domain.TenantID {
	return domain.TenantID(extension(e, "tenant"))
}

// EventRevision is the revision extension of an event NewEvent made; 0
// when it is missing or not a number.
func EventRevision(e cloudevents.Event) uint64 {
	n, _ := strconv.ParseUint(extension(e, "revision"), 10, 64)
	return n
}

// EventMsgID is the Nats-Msg-Id of the change an event NewEvent made
// reports: GrantMsgID for a grant's creation or revocation, MsgID of its
// subject and revision for a request's change.
func EventMsgID(e cloudevents.Event) string {
	return Change{Type: e.Type(), Subject: e.Subject(), Revision: EventRevision(e)}.MsgID()
}

func extension(e cloudevents.Event, name string) string {
	v, ok := e.Extensions()[name]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

func setAttr(e *cloudevents.Event, name, v string) error {
	switch name {
	case "specversion":
		e.SetSpecVersion(v)
	case "id":
		e.SetID(v)
	case "source":
		e.SetSource(v)
	case "type":
		e.SetType(v)
	case "subject":
		e.SetSubject(v)
	case "datacontenttype":
		e.SetDataContentType(v)
	case "time":
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fmt.Errorf("events: ce-time: %w", err)
		}
		e.SetTime(t)
	default:
		e.SetExtension(name, v)
	}
	return nil
}

// percentEncode encodes space, '"', '%' and every byte outside printable
// ASCII as %XX (HTTP binding §3.1.3.2, which the NATS binding follows).
func percentEncode(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f || r == '"' || r == '%' }) {
		return s // the usual case: ids, types, times
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("events: bad percent-encoding in %q", s)
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("events: bad percent-encoding in %q", s)
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}
