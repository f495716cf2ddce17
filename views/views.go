package views

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views/pack"
	"github.com/countersign/countersign/views/snapshot"
	"github.com/nats-io/nats.go"
	"golang.org/x/sync/errgroup"
)

// Views is the read side of the state: the configured tenants, and mirrors
// of registered agents, grants, rules and requests. Lookups never touch
// the network.
type Views struct {
	conn     *nats.Conn // the watchers' connection
	tenants  atomic.Pointer[map[domain.TenantID]*domain.Tenant]
	agents   *Mirror[domain.Agent]
	grants   *Mirror[domain.Grant]
	rules    *Mirror[domain.Rule]
	delegs   *Mirror[domain.Delegation]
	requests *RequestMirror
	snaps    *RequestSnapshots
}

// Config is what New builds the views from.
type Config struct {
	// Store is the state the views mirror. Required.
	Store *kvstate.Store
	// Tenants are the configured tenants (SetTenants replaces them when
	// the config changes).
	Tenants []*domain.Tenant
	// Logger is where the views tell what they cannot do (a snapshot that
	// cannot be read or saved). Default slog.Default().
	Logger *slog.Logger
}

// New builds the views over cfg.Store for cfg.Tenants. It refuses a
// Config without a Store.
func New(cfg Config) (*Views, error) {
	if cfg.Store == nil {
		return nil, errors.New("views: Config.Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	store, tenants := cfg.Store, cfg.Tenants
	v := &Views{conn: store.JetStream().Conn()}
	v.SetTenants(tenants)
	v.agents = NewMirror(store.Agents(), func(a domain.Agent) []string {
		return []string{"tok:" + a.TokenSHA256, childKey(a.Tenant, a.Parent)}
	})
	v.grants = NewMirror(store.Grants(), func(g domain.Grant) []string {
		return []string{string(g.Tenant) + "/" + string(g.Agent), "t:" + string(g.Tenant)}
	})
	v.rules = NewMirror(store.Rules(), func(r domain.Rule) []string {
		return []string{string(r.Tenant) + "/" + string(r.Agent)}
	})
	v.delegs = NewMirror(store.Delegations(), func(d domain.Delegation) []string {
		return []string{"a:" + string(d.Tenant) + "/" + string(d.Agent)}
	})
	var shards []*Mirror[kvstate.Record]
	v.snaps = &RequestSnapshots{}
	for i := range store.Shards() {
		kv, stream := store.RequestShard(i)
		m := NewMirror(kv, v.requestIndex)
		m.summarize, m.peek = summarizeRequest, peekRequest
		m.packer, m.stored, m.packID = &pack.Packer{}, storedRecord, pack.DictID
		snaps := &Snapshots[kvstate.Record]{mirror: m, store: snapshot.NewStore(store.Snapshots(), kvstate.RequestBucket(i)), stream: stream,
			now: time.Now, log: cfg.Logger.Warn}
		m.resume = snaps.Resume
		shards, v.snaps.shards = append(shards, m), append(v.snaps.shards, snaps)
	}
	v.requests = newRequestMirror(shards)
	return v, nil
}

// WriteRequest runs write, this process's write of request id in tenant,
// and puts the record it returns in the request mirror at once, so that
// the writer's next read sees it. While write runs the watcher leaves the
// key to it (Mirror.Expect): a write that fails puts nothing in the
// mirror, and what the watcher delivered for the key meanwhile is applied
// when WriteRequest returns. The record and error are write's.
func (v *Views) WriteRequest(tenant domain.TenantID, id domain.RequestID, write func() (kvstate.Record, error)) (kvstate.Record, error) {
	m := v.requests.of(tenant)
	defer m.Expect(kvstate.RequestKey(tenant, id))()
	rec, err := write()
	if err == nil {
		m.Apply(kvstate.RequestKey(rec.Tenant, rec.ID), rec, rec.KVRevision)
	}
	return rec, err
}

// Snapshots keeps the request mirror's snapshots (snapshot.go), a set per
// shard.
func (v *Views) Snapshots() *RequestSnapshots { return v.snaps }

// Requests is the mirror of request records (the inbox, deadlines, waits
// are fed from its one watcher).
func (v *Views) Requests() *RequestMirror { return v.requests }

// GrantMirror is the mirror of grants.
func (v *Views) GrantMirror() *Mirror[domain.Grant] { return v.grants }

// AgentMirror is the mirror of registered subagents.
func (v *Views) AgentMirror() *Mirror[domain.Agent] { return v.agents }

// RuleMirror is the mirror of rules kept through the API.
func (v *Views) RuleMirror() *Mirror[domain.Rule] { return v.rules }

// DelegationMirror is the mirror of delegated work.
func (v *Views) DelegationMirror() *Mirror[domain.Delegation] { return v.delegs }

// Run keeps every mirror current until ctx ends. When the connection
// drops, the mirrors are marked stale; when it comes back, their watchers
// restart at once from where they stopped.
func (v *Views) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return v.agents.Run(ctx) })
	g.Go(func() error { return v.grants.Run(ctx) })
	g.Go(func() error { return v.rules.Run(ctx) })
	g.Go(func() error { return v.delegs.Run(ctx) })
	g.Go(func() error { return v.requests.Run(ctx) })
	g.Go(func() error { v.followConnection(ctx); return nil })
	return g.Wait()
}

// watched is what Views needs of a mirror of any type.
type watched interface {
	Stale()
	Restart()
	Current() bool
}

type namedMirror struct {
	bucket string
	watched
}

func (v *Views) mirrors() []namedMirror {
	return []namedMirror{{kvstate.BucketAgents, v.agents}, {kvstate.BucketGrants, v.grants}, {kvstate.BucketRules, v.rules}, {kvstate.BucketDelegations, v.delegs}, {kvstate.BucketRequests, v.requests}}
}

// followConnection restarts the watchers on every reconnect.
func (v *Views) followConnection(ctx context.Context) {
	status := v.conn.StatusChanged(nats.CONNECTED, nats.DISCONNECTED, nats.RECONNECTING)
	defer v.conn.RemoveStatusListener(status)
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-status:
			for _, m := range v.mirrors() {
				if s == nats.CONNECTED {
					m.Restart()
				} else {
					m.Stale()
				}
			}
		}
	}
}

// Current returns nil when every watcher is live and caught up, or
// ErrStale naming the first that is not. It costs no I/O (for /readyz).
func (v *Views) Current() error {
	for _, m := range v.mirrors() {
		if !m.Current() {
			return fmt.Errorf("%w: %s", kvstate.ErrStale, m.bucket)
		}
	}
	return nil
}

// WaitReady blocks until every mirror holds the state that existed at
// start, or returns why one could not.
func (v *Views) WaitReady(ctx context.Context) error {
	for _, m := range []interface {
		Ready() <-chan struct{}
		Err() error
	}{v.agents, v.grants, v.rules, v.delegs, v.requests} {
		select {
		case <-m.Ready():
			if err := m.Err(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// SetTenants replaces the configured tenants at once (a config revision
// applied): every lookup after it sees only these. The tenants must not be
// changed afterwards.
func (v *Views) SetTenants(tenants []*domain.Tenant) {
	m := make(map[domain.TenantID]*domain.Tenant, len(tenants))
	for _, t := range tenants {
		m[t.ID] = t
	}
	v.tenants.Store(&m)
}

// Tenant returns a configured tenant.
func (v *Views) Tenant(id domain.TenantID) (*domain.Tenant, bool) {
	t, ok := (*v.tenants.Load())[id]
	return t, ok
}

// Tenants returns every configured tenant.
func (v *Views) Tenants() []*domain.Tenant {
	tenants := *v.tenants.Load()
	out := make([]*domain.Tenant, 0, len(tenants))
	for _, t := range tenants {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Agent returns a configured agent or a registered subagent.
func (v *Views) Agent(tenant domain.TenantID, id domain.AgentID) (*domain.Agent, bool) {
	t, ok := v.Tenant(tenant)
	if !ok {
		return nil, false
	}
	if a, ok := t.Agents[id]; ok {
		return a, true
	}
	a, ok := v.agents.Get(kvstate.AgentKey(tenant, id))
	if !ok {
		return nil, false
	}
	return &a, true
}

// Authenticate maps a bearer token to its tenant and token entry, comparing
// hashes in constant time.
func (v *Views) Authenticate(token string) (*domain.Tenant, domain.Token, bool) {
	return v.AuthenticateHash(domain.HashToken(token))
}

// AuthenticateHash is Authenticate of a token known by its SHA-256 (lowercase
// hex): what a held operation is checked against after a config change.
func (v *Views) AuthenticateHash(h string) (*domain.Tenant, domain.Token, bool) {
	tenants := *v.tenants.Load()
	for _, t := range tenants {
		for _, tok := range t.Tokens {
			if subtle.ConstantTimeCompare([]byte(tok.SHA256), []byte(h)) == 1 {
				return t, tok, true
			}
		}
	}
	for _, a := range v.agents.ByIndex("tok:" + h) {
		if t, ok := tenants[a.Tenant]; ok && !v.Retired(a.Tenant, a.ID) {
			return t, domain.Token{SHA256: h, Principal: domain.Ref{Kind: domain.KindAgent, ID: string(a.ID)},
				Scopes: a.TokenScopes()}, true
		}
	}
	return nil, domain.Token{}, false
}

// Retired reports whether agent or any agent above it is retired, or gone
// from the config: a subagent registered under an agent while it was being
// retired, or under one a config reload removed, is retired with it.
func (v *Views) Retired(tenant domain.TenantID, agent domain.AgentID) bool {
	seen := map[domain.AgentID]bool{}
	for id := agent; id != "" && !seen[id]; {
		seen[id] = true
		a, ok := v.Agent(tenant, id)
		if !ok {
			return id != agent // an agent above it left the config: retired with it
		}
		if a.RetiredAt != nil {
			return true
		}
		id = a.Parent
	}
	return false
}

// ChildrenOf returns the subagents registered under agent.
func (v *Views) ChildrenOf(tenant domain.TenantID, agent domain.AgentID) []domain.Agent {
	return v.agents.ByIndex(childKey(tenant, agent))
}

func childKey(tenant domain.TenantID, parent domain.AgentID) string {
	return "child:" + string(tenant) + "/" + string(parent)
}

// GrantsOf returns the grants (revoked ones too) of one agent.
func (v *Views) GrantsOf(tenant domain.TenantID, agent domain.AgentID) []domain.Grant {
	return v.grants.ByIndex(string(tenant) + "/" + string(agent))
}

// TenantGrants returns every grant in a tenant.
func (v *Views) TenantGrants(tenant domain.TenantID) []domain.Grant {
	return v.grants.ByIndex("t:" + string(tenant))
}

// RulesOf returns an agent's rules kept through the API or answers, oldest
// first (configured rules are the caller's to add).
func (v *Views) RulesOf(tenant domain.TenantID, agent domain.AgentID) []domain.Rule {
	out := v.rules.ByIndex(string(tenant) + "/" + string(agent))
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Delegation returns agent's delegated work in session, active or ended.
func (v *Views) Delegation(tenant domain.TenantID, agent domain.AgentID, session string) (domain.Delegation, bool) {
	return v.delegs.Get(kvstate.DelegationKey(tenant, agent, session))
}

// DelegationsOf returns agent's delegations, active and ended.
func (v *Views) DelegationsOf(tenant domain.TenantID, agent domain.AgentID) []domain.Delegation {
	return v.delegs.ByIndex("a:" + string(tenant) + "/" + string(agent))
}

// ScanGrants calls fn with the tenant's grants after the grant id after
// ("": from the first), in id order, until fn returns false. fn must not
// call back into the views' grants.
func (v *Views) ScanGrants(tenant domain.TenantID, after string, fn func(g *domain.Grant) bool) {
	v.grants.Scan("t:"+string(tenant), afterKey(tenant, after), func(_ string, _ Summary, _ uint64, g *domain.Grant) bool { return fn(g) })
}

// Requests are held in full while pending; a terminal one is held as its
// Summary and index keys, and read from the bucket when it is shown.

// Pending returns a tenant's pending requests, oldest first.
func (v *Views) Pending(tenant domain.TenantID) []kvstate.Record {
	return v.requests.of(tenant).ByIndex(pendingKey(tenant))
}

// PendingInbox returns the pending requests in which principal p takes
// part in tenant: those waiting for p and those p endorsed or abstained on.
func (v *Views) PendingInbox(tenant domain.TenantID, p domain.Ref) []kvstate.Record {
	var out []kvstate.Record
	for _, r := range v.Pending(tenant) {
		if v.InInbox(&r, p) {
			out = append(out, r)
		}
	}
	return out
}

// InInbox reports whether principal p takes part in r (see InboxScope).
func (v *Views) InInbox(r *kvstate.Record, p domain.Ref) bool {
	return slices.Contains(v.requestIndex(*r), participantKey(r.Tenant, p))
}

// requestIndex is requestIndex with a pending request that waits on a
// group also under each person of the group (SPEC §12), as the tenant
// stands it when the change is indexed.
func (v *Views) requestIndex(r kvstate.Record) []string {
	ix := requestIndex(r)
	if r.Status != domain.StatusPending || r.Approver == nil || r.Approver.Kind != domain.KindGroup {
		return ix
	}
	if t, ok := v.Tenant(r.Tenant); ok {
		for _, m := range t.People(*r.Approver) {
			if p := (domain.Ref{Kind: domain.KindPerson, ID: string(m)}); !r.Approvals.By(p) { // indexed already
				ix = append(ix, participantKey(r.Tenant, p))
			}
		}
	}
	return ix
}

// RequestScope names a set of a tenant's requests to scan.
type RequestScope string

// InboxScope is the inbox of principal p in tenant: the requests waiting
// for p and those p answered, endorsed or abstained on.
func InboxScope(tenant domain.TenantID, p domain.Ref) RequestScope {
	return RequestScope(participantKey(tenant, p))
}

// TenantScope is every request of a tenant; PendingScope its pending ones.
func TenantScope(tenant domain.TenantID) RequestScope  { return RequestScope("t:" + string(tenant)) }
func PendingScope(tenant domain.TenantID) RequestScope { return RequestScope(pendingKey(tenant)) }

// ScanRequests calls fn with the requests of scope in tenant after the
// request id after ("": from the first), oldest first, until fn returns
// false: each with its summary and KV revision, and the record when it is
// held in full (pending), else nil. fn must not call back into the request
// mirror, nor keep r.
func (v *Views) ScanRequests(tenant domain.TenantID, scope RequestScope, after string, fn func(id domain.RequestID, s Summary, kvRev uint64, r *kvstate.Record) bool) {
	skip := len(tenant) + 1
	v.requests.of(tenant).Scan(string(scope), afterKey(tenant, after), func(key string, s Summary, rev uint64, r *kvstate.Record) bool {
		return fn(domain.RequestID(key[skip:]), s, rev, r)
	})
}

// HeldRequest returns the request the mirror holds packed at KV revision
// kvRev (a terminal request), without reading KV; false when it holds it
// at another revision, in full, or not at all.
func (v *Views) HeldRequest(tenant domain.TenantID, id domain.RequestID, kvRev uint64) (domain.Request, bool) {
	m := v.requests.of(tenant)
	z, rev, ok := m.Packed(kvstate.RequestKey(tenant, id))
	if !ok || rev != kvRev {
		return domain.Request{}, false
	}
	var r domain.Request
	if decodePacked(m.packer, z, &r) != nil {
		return domain.Request{}, false
	}
	return r, true
}

// decodePacked decodes the request packed in z into r, unpacking it into
// a pooled buffer: the decoder copies what it keeps, so a page of
// terminal requests does not allocate a buffer per record.
// unpackScratch holds the buffers the mirror unpacks into to read a
// packed value's fields.
var unpackScratch = sync.Pool{New: func() any { return new([]byte) }}

func decodePacked(p *pack.Packer, z []byte, r *domain.Request) error {
	buf := unpackScratch.Get().(*[]byte)
	defer unpackScratch.Put(buf)
	raw, err := p.UnpackInto(*buf, z)
	if err != nil {
		return err
	}
	*buf = raw
	return json.Unmarshal(raw, r)
}

// afterKey is the key of id in tenant, or "" (from the first) for no id.
func afterKey(tenant domain.TenantID, id string) string {
	if id == "" {
		return ""
	}
	return string(tenant) + "." + id
}

func participantKey(tenant domain.TenantID, p domain.Ref) string {
	return string(tenant) + "/" + p.Kind + ":" + p.ID
}

func pendingKey(tenant domain.TenantID) string { return "p:" + string(tenant) }

func agentPendingKey(tenant domain.TenantID, agent domain.AgentID) string {
	return "pa:" + string(tenant) + "/" + string(agent)
}

// PendingOf counts the pending requests agent made in tenant, as this
// process's mirror holds them: its own writes at once, other processes'
// a moment later.
func (v *Views) PendingOf(tenant domain.TenantID, agent domain.AgentID) int {
	return v.requests.of(tenant).Count(agentPendingKey(tenant, agent))
}

// PendingOfAgent returns the pending requests agent made in tenant, oldest
// first, as this process's mirror holds them.
func (v *Views) PendingOfAgent(tenant domain.TenantID, agent domain.AgentID) []kvstate.Record {
	return v.requests.of(tenant).ByIndex(agentPendingKey(tenant, agent))
}

// requestIndex indexes a request under its tenant, under its tenant's
// and its agent's pending ones while it is pending, under its approver
// (the one it waits on; once terminal, the one it was waiting on when it
// ended: a request that expired or was cancelled while waiting on a
// person stays in that person's history), and under everyone who
// answered it. A cancel is no answer: the requester's own cancelled
// requests stay out of its inbox.
func requestIndex(r kvstate.Record) []string {
	ix := []string{"t:" + string(r.Tenant)}
	if r.Status == domain.StatusPending {
		ix = append(ix, pendingKey(r.Tenant), agentPendingKey(r.Tenant, r.Agent))
	}
	if r.Approver != nil {
		ix = append(ix, participantKey(r.Tenant, *r.Approver))
	}
	if d := r.Decision; d != nil && d.Status != domain.StatusCancelled &&
		(d.By.Kind == domain.KindPerson || d.By.Kind == domain.KindAgent) && (r.Approver == nil || *r.Approver != d.By) {
		ix = append(ix, participantKey(r.Tenant, r.Decision.By))
	}
	for _, e := range append(append([]domain.Endorsement(nil), r.Endorsements...), r.Abstentions...) {
		ix = append(ix, participantKey(r.Tenant, domain.Ref{Kind: domain.KindAgent, ID: string(e.Agent)}))
	}
	for _, a := range r.Approvals {
		if r.Decision == nil || a.By != r.Decision.By {
			ix = append(ix, participantKey(r.Tenant, a.By))
		}
	}
	return ix
}

// storedRecord is r's stored bytes: those its writer kept, or r encoded
// as it is stored.
func storedRecord(r *kvstate.Record) []byte { return r.Encoded() }

// summarizeRequest is the request mirror's summary: a pending request is
// held in full, a terminal one as its summary.
func summarizeRequest(r *kvstate.Record) (Summary, bool) {
	return Summary{Agent: intern(string(r.Agent)), Status: intern(string(r.Status)), Revision: r.Revision}, !r.Status.Terminal()
}

// peekedRequest is what the request mirror reads of a stored terminal
// request: its summary and the fields requestIndex looks at.
type peekedRequest struct {
	Tenant       domain.TenantID `json:"tenant"`
	Agent        domain.AgentID  `json:"agent"`
	Status       domain.Status   `json:"status"`
	Revision     uint64          `json:"revision"`
	Approver     *domain.Ref     `json:"approver"`
	Decision     *peekedDecision `json:"decision"`
	Endorsements []peekedAgent   `json:"endorsements"`
	Abstentions  []peekedAgent   `json:"abstentions"`
	Approvals    []peekedAgent   `json:"approvals"`
}

type peekedDecision struct {
	Status domain.Status `json:"status"`
	By     domain.Ref    `json:"by"`
}

type peekedAgent struct {
	Agent domain.AgentID `json:"agent"`
	By    domain.Ref     `json:"by"` // an approval's
}

// peekRequest reads the summary and index keys of a stored terminal
// request without decoding the rest of it; false for a pending one (or
// one it cannot read), which is decoded whole.
func peekRequest(data []byte) (Summary, []string, bool) {
	p, ok := scanTerminal(data)
	if !ok {
		p = peekedRequest{}
		if err := json.Unmarshal(data, &p); err != nil {
			return Summary{}, nil, false
		}
	}
	if !p.Status.Terminal() {
		return Summary{}, nil, false
	}
	r := kvstate.Record{Request: domain.Request{Tenant: p.Tenant, Agent: p.Agent, Status: p.Status, Revision: p.Revision, Approver: p.Approver}}
	if p.Decision != nil {
		r.Decision = &domain.Decision{Status: p.Decision.Status, By: p.Decision.By}
	}
	for _, e := range p.Endorsements {
		r.Endorsements = append(r.Endorsements, domain.Endorsement{Agent: e.Agent})
	}
	for _, e := range p.Abstentions {
		r.Abstentions = append(r.Abstentions, domain.Endorsement{Agent: e.Agent})
	}
	for _, a := range p.Approvals {
		r.Approvals = append(r.Approvals, domain.Approval{By: a.By})
	}
	s, _ := summarizeRequest(&r)
	return s, internAll(requestIndex(r)), true
}
