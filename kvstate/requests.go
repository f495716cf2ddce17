package kvstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Record is a request as stored, with the KV revision it was read at.
type Record struct {
	domain.Request
	KVRevision uint64
	// Written is when the stored revision was written (server clock).
	Written time.Time
	// raw is the stored bytes of a record this process just wrote, so
	// that the mirror packs them without encoding the record again
	// (dropped when the mirror holds the record in full).
	raw []byte
	// replica: read by direct get on a replicated bucket, which a lagging
	// replica may have answered (see read.go), or taken from a mirror
	// (MayLag): either may be behind the stored record.
	replica bool
	// partial: held without its arguments, which are larger than
	// LargeArguments (Trim); Store.Full reads them.
	partial bool
}

// LargeArguments is the size of arguments past which a mirror holds a
// pending request without them (SPEC §5 "Quotas": a pending request's
// memory stays a small multiple of its stored size).
const LargeArguments = 4 << 10

// Trim drops r's arguments when they are larger than LargeArguments,
// marking r partial: what a mirror holds in full.
func (r *Record) Trim() {
	if r.Trims() {
		r.Arguments, r.partial = nil, true
	}
}

// Trims reports whether Trim would drop r's arguments.
func (r *Record) Trims() bool { return len(r.Arguments) > LargeArguments }

// Partial reports whether r is held without its arguments (Trim): a
// reader that shows or checks them reads r with Store.Full first.
func (r *Record) Partial() bool { return r.partial }

// MayLag marks r as possibly behind the stored record (a mirror's copy):
// TransitionFrom then checks a refusal based on it against the stored
// record, and its compare-and-set refuses a write based on a stale one.
func (r Record) MayLag() Record {
	r.replica = true
	return r
}

// SetMeta sets where r was read: its KV revision and when it was written.
func (r *Record) SetMeta(rev uint64, at time.Time) { r.KVRevision, r.Written = rev, at }

// DropStored forgets the stored bytes r's writer kept (a mirror that holds
// r in full does not need them).
func (r *Record) DropStored() { r.raw = nil }

// Encoded is r's stored bytes: those its writer kept, or r encoded as it
// is stored.
func (r *Record) Encoded() []byte {
	if r.raw != nil {
		return r.raw
	}
	raw, _ := encode(&r.Request)
	return raw
}

// Stored is the JSON this process stored for r when it wrote it (nil when r
// was read): the record encoded as encoding/json encodes r.Request, without
// HTML escaping. It is the encoding at the write; a caller that changes
// r.Request after the write must encode it again.
func (r *Record) Stored() []byte { return r.raw }

// Mutation changes a request in place and returns the event type of the
// change, or an error that aborts the transition (returned unchanged).
type Mutation func(r *domain.Request) (eventType string, err error)

// maxAttempts bounds the retries of a Transition that loses its
// compare-and-set to a concurrent writer.
const maxAttempts = 8

// RequestKey is the KV key of a request: <tenant>.<id>.
func RequestKey(tenant domain.TenantID, id domain.RequestID) string {
	return string(tenant) + "." + string(id)
}

type traceKey struct{}

// WithTraceparent carries a W3C traceparent into the events of the writes
// made under ctx.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	return context.WithValue(ctx, traceKey{}, tp)
}

// CreateRequest stores a new request with the event of its creation
// (created when pending, decided when steps 1–4 decided). It returns
// ErrExists if the id is taken and ErrIllegal for a bad status.
func (s *Store) CreateRequest(ctx context.Context, r *domain.Request) (Record, error) {
	typ := events.TypeRequestCreated
	if r.Status.Terminal() {
		typ = events.TypeRequestDecided
	}
	if !Legal(typ, none, r.Status) {
		return Record{}, fmt.Errorf("%w: create as %s", ErrIllegal, r.Status)
	}
	rev, data, err := s.write(ctx, typ, r, 0, nil)
	if errors.Is(err, ErrConflict) {
		return Record{}, ErrExists
	}
	return Record{Request: *r, KVRevision: rev, Written: time.Now(), raw: data}, err
}

// GetRequest reads a request (from the stream leader on a replicated
// bucket, see read.go). It returns ErrNotFound if there is none.
func (s *Store) GetRequest(ctx context.Context, tenant domain.TenantID, id domain.RequestID) (Record, error) {
	return s.GetRequestAfter(ctx, tenant, id, 0)
}

// GetRequestAfter is GetRequest for a caller that already knows KV revision
// floor of the request (0: none): a read below it, or a not-found, is
// stale and read again; reads that stay stale are ErrUnavailable (with
// ErrStale).
func (s *Store) GetRequestAfter(ctx context.Context, tenant domain.TenantID, id domain.RequestID, floor uint64) (Record, error) {
	sh := s.shard(tenant)
	e, err := s.readKeyAfter(ctx, sh.reqBucket, sh.requests, RequestKey(tenant, id), floor)
	if err != nil {
		return Record{}, err
	}
	return decodeRecord(e)
}

// RequestAt reads the request as stored at KV revision rev, for display
// (a list page shows a terminal request the mirror holds at rev): one get
// by stream sequence, with no lookup of the key's last revision, which
// costs a scan of its message block. A revision that is gone is
// ErrNotFound (the request was removed); on a replicated bucket, where a
// lagging replica may not have it yet, the read falls back to PeekRequest.
func (s *Store) RequestAt(ctx context.Context, tenant domain.TenantID, id domain.RequestID, rev uint64) (Record, error) {
	key, sh := RequestKey(tenant, id), s.shard(tenant)
	m, err := sh.requestStream.GetMsg(ctx, rev)
	switch {
	case err == nil && m.Subject == subjectOf(sh.reqBucket, key) && m.Header.Get(kvOperationHdr) == "":
		return decodeRecord(stored{key: key, value: m.Data, rev: m.Sequence, at: m.Time})
	case s.leaderReads:
		return s.PeekRequest(ctx, tenant, id, rev)
	case err == nil, errors.Is(err, jetstream.ErrMsgNotFound):
		return Record{}, ErrNotFound
	}
	return Record{}, mapErr(err)
}

// PeekRequest reads a request by direct get on a replicated bucket, which
// any replica answers (so reads spread over the cluster), falling back to
// the leader (GetRequestAfter) on a not-found or an answer below floor,
// which a lagging replica may give. Its record may still be a moment old:
// TransitionFrom checks a refusal based on it against the leader's.
func (s *Store) PeekRequest(ctx context.Context, tenant domain.TenantID, id domain.RequestID, floor uint64) (Record, error) {
	if s.leaderReads {
		e, err := s.shard(tenant).requests.Get(ctx, RequestKey(tenant, id))
		if err == nil && e.Revision() >= floor {
			rec, err := decodeRecord(stored{key: e.Key(), value: e.Value(), rev: e.Revision(), at: e.Created()})
			rec.replica = true
			return rec, err
		}
		if err != nil && !errors.Is(mapErr(err), ErrNotFound) {
			return Record{}, mapErr(err)
		}
	}
	return s.GetRequestAfter(ctx, tenant, id, floor)
}

// Full returns rec with its arguments: rec itself when it is not partial,
// else the stored record at rec's KV revision (or, on a replicated bucket
// whose replica has not got it yet, a later one). Errors: those of
// RequestAt and GetRequestAfter.
func (s *Store) Full(ctx context.Context, rec Record) (Record, error) {
	if !rec.partial {
		return rec, nil
	}
	full, err := s.RequestAt(ctx, rec.Tenant, rec.ID, rec.KVRevision)
	if errors.Is(err, ErrNotFound) { // that revision is gone: read the latest
		full, err = s.GetRequestAfter(ctx, rec.Tenant, rec.ID, rec.KVRevision)
	}
	if err != nil {
		return Record{}, err
	}
	full.replica = rec.replica
	return full, nil
}

func decodeRecord(e stored) (Record, error) {
	var rec Record
	if err := json.Unmarshal(e.value, &rec.Request); err != nil {
		return Record{}, fmt.Errorf("kvstate: decode %s: %w", e.key, err)
	}
	rec.KVRevision, rec.Written = e.rev, e.at
	return rec, nil
}

// Transition applies fn to the current request with one compare-and-set,
// bumping its revision and writing the change's event with it. On a lost
// compare-and-set it re-reads and re-applies fn, at most maxAttempts times,
// then returns ErrConflict. Errors from fn come back unchanged (with the
// record fn saw); a move outside the legal table is ErrIllegal; a missing
// request ErrNotFound.
func (s *Store) Transition(ctx context.Context, tenant domain.TenantID, id domain.RequestID, fn Mutation) (Record, error) {
	cur, err := s.GetRequest(ctx, tenant, id)
	if err != nil {
		return Record{}, err
	}
	return s.TransitionFrom(ctx, cur, fn)
}

// TransitionFrom is Transition starting from cur, a record just read, which
// saves the first read. When cur came from a replica (PeekRequest) and fn
// or the table refuses the change, the refusal may rest on a lagging
// replica's answer: the leader's record is read and, if it is newer, fn is
// applied to it instead; the write itself is a compare-and-set either way.
//
// A partial cur (held without its arguments) is read in full first: the
// change writes the whole record.
func (s *Store) TransitionFrom(ctx context.Context, cur Record, fn Mutation) (Record, error) {
	if cur.partial {
		var err error
		if cur, err = s.Full(ctx, cur); err != nil {
			return Record{}, err
		}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			// The compare-and-set was lost: the key is past cur, and a
			// read that is not is stale.
			var err error
			if cur, err = s.GetRequestAfter(ctx, cur.Tenant, cur.ID, cur.KVRevision+1); err != nil {
				return Record{}, err
			}
		}
		next := cur.Request.Clone() // cur may be a mirror's copy, shared with its readers
		typ, err := fn(&next)
		if err == nil && !Legal(typ, cur.Status, next.Status) {
			err = fmt.Errorf("%w: %s from %s to %s", ErrIllegal, typ, cur.Status, next.Status)
		}
		if err != nil && cur.replica { // only a first read comes from a replica
			if lead, lerr := s.GetRequestAfter(ctx, cur.Tenant, cur.ID, cur.KVRevision); lerr == nil && lead.KVRevision > cur.KVRevision {
				cur, attempt = lead, -1 // apply fn to the leader's record, as a first attempt
				continue
			}
		}
		if err != nil {
			return cur, err
		}
		next.Revision = cur.Revision + 1
		rev, data, err := s.write(ctx, typ, &next, cur.KVRevision, waitedOn(&cur.Request))
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return cur, err
		}
		return Record{Request: next, KVRevision: rev, Written: time.Now(), raw: data}, nil
	}
	return Record{}, ErrConflict
}

// write publishes r under its key if the key's last revision is last (0:
// absent), with the CloudEvent of the change in the headers, and returns
// its revision and the bytes written. was is whom the request waited on
// before the change (nil: nobody).
func (s *Store) write(ctx context.Context, typ string, r *domain.Request, last uint64, was *domain.Ref) (uint64, []byte, error) {
	data, err := encode(r)
	if err != nil {
		return 0, nil, fmt.Errorf("kvstate: encode %s: %w", r.ID, err)
	}
	tp, _ := ctx.Value(traceKey{}).(string)
	h := effects(typ, r)
	if was != nil {
		h.Set(events.HeaderWasTo, events.WorkTo(*was))
	}
	events.ChangeHeaders(h, typ, r.Tenant, string(r.ID), r.Revision, time.Now(), tp)
	sh := s.shard(r.Tenant)
	rev, err := s.publish(ctx, sh.reqBucket, RequestKey(r.Tenant, r.ID), data, h, last, sh.commits)
	return rev, data, err
}

// effects are the internal headers telling the outbox what a change
// derives: the decider's work subject, or grants (and delegated work,
// SPEC §3) to write.
func effects(typ string, r *domain.Request) nats.Header {
	h := nats.Header{}
	switch {
	case (typ == events.TypeRequestCreated || typ == events.TypeRequestEscalated || typ == events.TypeRequestUpdated) && r.Approver != nil:
		h.Set(events.HeaderWorkTo, events.WorkTo(*r.Approver))
	}
	if (typ == events.TypeRequestDecided && leavesGrants(r.Decision)) || stagesLeaveGrants(r) || r.Delegates() {
		h.Set(events.HeaderGrants, "1")
	}
	if r.Revision == 0 && len(r.Shadow) > 0 { // its creation (SPEC §16)
		h.Set(events.HeaderShadowed, "1")
	}
	return h
}

// waitedOn is whom r waits on: its approver while it is pending, else nil.
func waitedOn(r *domain.Request) *domain.Ref {
	if r.Status != domain.StatusPending {
		return nil
	}
	return r.Approver
}

// stagesLeaveGrants reports whether a decider allowed a stage of r with
// scope session or lifetime: each such stage leaves grants (SPEC §8).
func stagesLeaveGrants(r *domain.Request) bool {
	for _, st := range r.Stages {
		if st.AllowedBy != nil && st.AllowedBy.Kind != domain.KindGrant && domain.ScopeRank(st.Scope) > domain.ScopeRank(domain.ScopeOnce) {
			return true
		}
	}
	return false
}

func leavesGrants(d *domain.Decision) bool {
	return d != nil && (d.By.Kind == domain.KindPerson || d.By.Kind == domain.KindAgent) &&
		(d.Scope == domain.ScopeSession || d.Scope == domain.ScopeLifetime)
}

// LastWrite returns the stored message of a request's latest change: the
// record and the CloudEvent headers it was written with.
func (s *Store) LastWrite(ctx context.Context, tenant domain.TenantID, id domain.RequestID) (*jetstream.RawStreamMsg, error) {
	bucket := s.RequestBucketOf(tenant)
	if s.leaderReads {
		return s.leaderLast(ctx, StreamOf(bucket), subjectOf(bucket, RequestKey(tenant, id)))
	}
	stream, err := s.js.Stream(ctx, StreamOf(bucket))
	if err != nil {
		return nil, mapErr(err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, subjectOf(bucket, RequestKey(tenant, id)))
	return msg, mapErr(err)
}

// encode writes v as JSON without HTML escaping, so that stored arguments
// stay as close as JSON allows to the bytes received.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// PurgeMarkerTTL is how long the marker of a removed request stays in the
// requests stream: long enough for a watcher that was away to see the
// removal when it resumes, short enough not to accumulate.
const PurgeMarkerTTL = 24 * time.Hour

// RemoveRequest removes every stored revision of a request, if its latest
// is still kvRev (ErrConflict otherwise): a terminal record past its
// retention (SPEC §9). Watchers see the removal and drop it from memory;
// the removal's own marker goes after PurgeMarkerTTL.
func (s *Store) RemoveRequest(ctx context.Context, tenant domain.TenantID, id domain.RequestID, kvRev uint64) error {
	err := s.shard(tenant).requests.Purge(ctx, RequestKey(tenant, id), jetstream.LastRevision(kvRev), jetstream.PurgeTTL(PurgeMarkerTTL))
	return mapErr(err)
}
