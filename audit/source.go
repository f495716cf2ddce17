package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// sources are the streams the log is projected from, in a fixed order
// (the cursor's): the state writes that carry section 9's events, the
// agents and rules buckets, the config's revisions and the audit input.
var sources = [...]string{
	kvstate.StreamOf(kvstate.BucketRequests),
	kvstate.StreamOf(kvstate.BucketGrants),
	kvstate.StreamOf(kvstate.BucketAgents),
	kvstate.StreamOf(kvstate.BucketRules),
	kvstate.StreamOf(kvstate.BucketConfig),
	InStream,
}

// sourceName names source src: sources[src], or past them request shard
// src-len(sources)+1 (with request_shards above 1; shard 0 is the
// first source). The cursor's keys are these names.
func sourceName(src int) string {
	if src < len(sources) {
		return sources[src]
	}
	return kvstate.StreamOf(kvstate.RequestBucket(src - len(sources) + 1))
}

// sourceMsg is one stored message of a source stream.
type sourceMsg struct {
	src     int // index in sources
	seq     uint64
	subject string
	header  nats.Header
	data    []byte
	at      time.Time
}

func fromJetStream(src int, m jetstream.Msg) (sourceMsg, error) {
	md, err := m.Metadata()
	if err != nil {
		return sourceMsg{}, err
	}
	return sourceMsg{src: src, seq: md.Sequence.Stream, subject: m.Subject(), header: m.Headers(), data: m.Data(), at: md.Timestamp}, nil
}

// change is what a source message adds to one tenant's log: an entry
// without its seq, prev and hash. canonical: the entry's data is in RFC
// 8785 form already.
type change struct {
	tenant    domain.TenantID
	entry     Entry
	canonical bool
}

// mapper turns source messages into changes.
type mapper struct {
	// configTenants names the tenants a config revision applies to.
	configTenants func(raw []byte) []domain.TenantID
}

// changes returns what m adds to the logs: none for a message that is no
// event (a request removed after its retention, say).
func (mp *mapper) changes(m sourceMsg) []change {
	if m.src >= len(sources) { // a request shard past the first
		return stateChange(m)
	}
	switch sourceName(m.src) {
	case kvstate.StreamOf(kvstate.BucketRequests), kvstate.StreamOf(kvstate.BucketGrants):
		return stateChange(m)
	case kvstate.StreamOf(kvstate.BucketAgents):
		return agentChange(m)
	case kvstate.StreamOf(kvstate.BucketRules):
		return ruleChange(m)
	case kvstate.StreamOf(kvstate.BucketConfig):
		return mp.configChange(m)
	default:
		return inChange(m)
	}
}

// kvOp is a KV write's operation: DEL or PURGE, empty for a put.
func kvOp(m sourceMsg) string { return m.header.Get("KV-Operation") }

func one(tenant domain.TenantID, typ string, actor Actor, subject string, at time.Time, data []byte) []change {
	data, canonical := canonicalData(data)
	return oneOf(tenant, typ, actor, subject, at, data, canonical)
}

func oneOf(tenant domain.TenantID, typ string, actor Actor, subject string, at time.Time, data []byte, canonical bool) []change {
	e := Entry{At: at, Tenant: string(tenant), Type: typ, Actor: actor, Subject: subject, Data: data}
	return []change{{tenant: tenant, entry: e, canonical: canonical}}
}

// canonicalData is data in RFC 8785 form (once here, rather than when
// its entry is sealed and again by whatever reads it first), and true;
// data that is no JSON becomes a JSON string of its bytes. Data the
// canonicalizer refuses (a number out of range, say) stays as it is,
// with false: seal keeps it as a string.
func canonicalData(data []byte) (json.RawMessage, bool) {
	if c, err := jcs.Canonicalize(data); err == nil {
		return c, true
	}
	if json.Valid(data) {
		return data, false
	}
	s, _ := json.Marshal(string(data))
	c, err := jcs.Canonicalize(s)
	return c, err == nil
}

// stateChange maps a request or grant write that carries a CloudEvent.
func stateChange(m sourceMsg) []change {
	c, ok := events.PeekChange(m.header)
	if !ok || kvOp(m) != "" {
		return nil
	}
	at := m.at
	if t, err := time.Parse(time.RFC3339Nano, m.header.Get("ce-time")); err == nil {
		at = t
	}
	data, canonical := canonicalData(m.data)
	return oneOf(c.Tenant, c.Type, actorOf(c.Type, data), c.Subject, at, data, canonical)
}

// actorOf says who made a request's or grant's change: the agent that
// asked, who decided, who claimed, who made the grant; the system
// otherwise (a timer, a revocation without a recorded author).
func actorOf(typ string, data []byte) Actor {
	switch typ {
	case events.TypeRequestCreated:
		return Actor{Kind: domain.KindAgent, ID: jsonString(member(data, "agent"))}
	case events.TypeRequestClaimed:
		return refActor(member(data, "approver"))
	case events.TypeGrantCreated:
		return refActor(member(data, "created_by"))
	}
	if d := member(data, "decision"); d != nil {
		return refActor(member(d, "by"))
	}
	return Actor{Kind: "system"}
}

// refActor is the actor of the reference {"kind", "id"} ref (as
// written, nil if absent): the system when it names no kind.
func refActor(ref []byte) Actor {
	kind := jsonString(member(ref, "kind"))
	if kind == "" {
		return Actor{Kind: "system"}
	}
	return Actor{Kind: kind, ID: jsonString(member(ref, "id"))}
}

// jsonString is the JSON string v (as written, valid JSON), "" if v is
// nil or no string: taken as it is when it holds no escape, decoded
// otherwise (decoding each of a record's few actor members cost the
// writer half its allocations an entry).
func jsonString(v []byte) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// member is the value of the top-level member key of obj as written, nil
// if obj is no object or holds none: reading the few members actorOf
// needs costs a scan of the record where decoding it cost two. obj is
// valid JSON (canonicalData's).
func member(obj []byte, key string) []byte {
	var v []byte
	_ = jcs.EachMember(obj, func(k, value []byte) error {
		if string(k) == key {
			v = value
			return errFound
		}
		return nil
	})
	return v
}

// errFound ends member's scan at the member it looks for.
var errFound = errors.New("audit: found")

// tenantOfKey splits a bucket key <tenant>.<rest> out of a KV subject.
func tenantOfKey(subject, bucket string) (domain.TenantID, string, bool) {
	key := strings.TrimPrefix(subject, "$KV."+bucket+".")
	t, rest, ok := strings.Cut(key, ".")
	return domain.TenantID(t), rest, ok && t != ""
}

func agentChange(m sourceMsg) []change {
	tenant, id, ok := tenantOfKey(m.subject, kvstate.BucketAgents)
	if !ok {
		return nil
	}
	if kvOp(m) != "" {
		return one(tenant, events.TypeAgentRemoved, Actor{Kind: "system"}, id, m.at, nil)
	}
	var a domain.Agent
	_ = json.Unmarshal(m.data, &a)
	typ, actor := events.TypeAgentRegistered, Actor{Kind: domain.KindPerson, ID: string(a.Member)}
	if a.Parent != "" {
		actor = Actor{Kind: domain.KindAgent, ID: string(a.Parent)}
	}
	if a.RetiredAt != nil {
		typ = events.TypeAgentRetired
	}
	a.TokenSHA256 = "" // not the audit's to keep
	data, _ := json.Marshal(a)
	return one(tenant, typ, actor, id, m.at, data)
}

func ruleChange(m sourceMsg) []change {
	tenant, key, ok := tenantOfKey(m.subject, kvstate.BucketRules)
	if !ok {
		return nil
	}
	agent, id, _ := strings.Cut(key, ".")
	if kvOp(m) != "" {
		data, _ := json.Marshal(map[string]string{"agent": agent, "id": id})
		return one(tenant, events.TypeRuleDeleted, Actor{Kind: "system"}, id, m.at, data)
	}
	var r domain.Rule
	_ = json.Unmarshal(m.data, &r)
	return one(tenant, events.TypeRulePut, Actor{Kind: r.CreatedBy.Kind, ID: r.CreatedBy.ID}, id, m.at, m.data)
}

// configChange adds a revision of the config file to the log of each
// tenant it names: its revision and SHA-256, never its text (it holds
// tokens).
func (mp *mapper) configChange(m sourceMsg) []change {
	if kvOp(m) != "" || mp.configTenants == nil {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"revision": m.seq, "sha256": kvstate.ConfigSHA256(m.data)})
	var out []change
	for _, t := range mp.configTenants(m.data) {
		out = append(out, one(t, events.TypeConfigApplied, Actor{Kind: "system", ID: "config"}, "config", m.at, data)...)
	}
	return out
}
