package approvals

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// SubmitInput is the body of POST /v1/requests.
type SubmitInput = domain.Submission

// MaxIdempotencyKey bounds an Idempotency-Key.
const MaxIdempotencyKey = 255

// MinTimeout is the shortest timeout a request may ask for.
const MinTimeout = time.Second

// capabilityOf resolves tool shorthand and checks the capability.
func capabilityOf(in *SubmitInput) (domain.Capability, error) {
	switch {
	case in.Tool != "" && in.Capability != nil:
		return domain.Capability{}, invalid("capability", "give either tool or capability, not both")
	case in.Tool != "":
		return domain.Capability{Action: domain.ActionToolsCall, Target: in.Tool}, validToolName("tool", in.Tool)
	case in.Capability == nil:
		return domain.Capability{}, invalid("tool", "tool or capability is required")
	case !domain.KnownAction(in.Capability.Action):
		return domain.Capability{}, invalid("capability.action", "unknown action %q", in.Capability.Action)
	case in.Capability.Target == "":
		return domain.Capability{}, invalid("capability.target", "target is required")
	case in.Capability.Action == domain.ActionToolsCall:
		return *in.Capability, validToolName("capability.target", in.Capability.Target)
	case in.Capability.Action == domain.ActionAgentsSpawn && in.Capability.Target != spawnCapability.Target:
		return domain.Capability{}, invalid("capability.target", "agents.spawn's target is %q: a spawn names no agent yet", spawnCapability.Target)
	}
	return *in.Capability, nil
}

// validToolName refuses a tool name that domain.CheckToolName refuses,
// as field.
func validToolName(field, name string) error {
	if err := domain.CheckToolName(name); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

func validate(in *SubmitInput, t *domain.Tenant) (domain.Capability, time.Duration, error) {
	capability, err := capabilityOf(in)
	if err != nil {
		return capability, 0, err
	}
	if a := bytes.TrimSpace(in.Arguments); len(a) == 0 || a[0] != '{' {
		return capability, 0, invalid("arguments", "arguments must be a JSON object")
	}
	for field, v := range map[string]string{"session": in.Session, "turn": in.Turn, "tool_call_id": in.ToolCallID} {
		if len(v) > domain.MaxOpaqueIDLen {
			return capability, 0, invalid(field, "at most %d bytes", domain.MaxOpaqueIDLen)
		}
	}
	if err := checkSubject(in, capability, t); err != nil {
		return capability, 0, err
	}
	if err := checkConnection(in.Connection, capability); err != nil {
		return capability, 0, err
	}
	timeout, err := effectiveTimeout(in.Timeout, t.RequestTimeout)
	return capability, timeout, err
}

// checkConnection refuses a connection that does not bind the call it
// comes with (SPEC §4, §8): one without an id or with a negative revision,
// one on any call but an apps.call, or one other than the connection the
// apps.call's target names (<connection>/<tool>). The digest and grants
// bind the pair, so the two must say the same connection.
func checkConnection(conn *domain.Connection, c domain.Capability) error {
	switch {
	case conn == nil:
		return nil
	case conn.ID == "":
		return invalid("connection.id", "connection.id is required")
	case c.Action != domain.ActionAppsCall:
		return invalid("connection", "only an apps.call is bound to a connection, not a %s", c.Action)
	case !strings.HasPrefix(c.Target, conn.ID+"/"):
		return invalid("connection.id", "must be the connection the target names (%q is not %s/<tool>)", c.Target, conn.ID)
	case conn.Revision < 0:
		return invalid("connection.revision", "a revision is a whole number, 0 or more")
	}
	return nil
}

func effectiveTimeout(s string, max time.Duration) (time.Duration, error) {
	if s == "" {
		return max, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, invalid("timeout", "not a Go duration: %q", s)
	}
	if d < MinTimeout {
		return 0, invalid("timeout", "at least 1s")
	}
	return min(d, max), nil
}

// Submit runs the check order for an intercepted call and stores the
// request (SPEC §2). With an idempotency key, a repeat of the same body
// returns the same request (created false); a different body is
// ErrIdempotencyKey. Past a quota (SPEC §5: the token's submit_rate, or
// the agent's max_pending, which a repeat of an existing key is not held
// to) it is ErrRateLimited and nothing is stored. Errors: InvalidRequest,
// ErrForbidden, ErrRateLimited, ErrUnavailable. Surfaces come through
// Endpoint(OpSubmit), whose Permit admits agents only.
func (s *Service) Submit(ctx context.Context, c Caller, in SubmitInput, idemKey, bodyDigest string) (kvstate.Record, bool, error) {
	if err := s.quota.allow(c, s.now()); err != nil {
		return kvstate.Record{}, false, err
	}
	if len(idemKey) > MaxIdempotencyKey {
		return kvstate.Record{}, false, invalid("Idempotency-Key", "at most %d bytes", MaxIdempotencyKey)
	}
	capability, timeout, err := validate(&in, c.Tenant)
	if err != nil {
		return kvstate.Record{}, false, err
	}
	if _, ok := s.views.Agent(c.Tenant.ID, domain.AgentID(c.Principal.ID)); !ok {
		return kvstate.Record{}, false, forbid("unknown agent")
	}
	if err := s.checkDelegate(c, capability); err != nil {
		return kvstate.Record{}, false, err
	}
	release, err := s.reservePending(ctx, c, idemKey)
	if err != nil {
		return kvstate.Record{}, false, err
	}
	defer release()
	id := domain.NewRequestID()
	if idemKey != "" {
		var took bool
		id, took, err = s.claimKey(ctx, c, idemKey, bodyDigest, id)
		if err != nil {
			return kvstate.Record{}, false, err
		}
		if !took {
			return s.recoverKeyed(ctx, c, id, in, capability, timeout)
		}
	}
	rec, err := s.create(ctx, c, id, in, capability, timeout)
	if err == nil {
		s.countSubmit(&rec.Request)
		err = s.ensureDelegation(ctx, &rec.Request)
	}
	return rec, true, err
}

// countSubmit counts a created request by its status and who decided.
func (s *Service) countSubmit(r *domain.Request) {
	by := "chain"
	if r.Decision != nil {
		by = r.Decision.By.Kind
	}
	s.submits.WithLabelValues(string(r.Status), by).Inc()
	s.countShadows(r)
}

func (s *Service) claimKey(ctx context.Context, c Caller, key, digest string, id domain.RequestID) (domain.RequestID, bool, error) {
	want := kvstate.Idempotency{RequestID: id, BodyDigest: digest, CreatedAt: s.now().UTC()}
	ttl := c.Tenant.IdempotencyTTL
	got, took, err := s.store.ClaimIdempotency(ctx, kvstate.IdempotencyKey(c.Tenant.ID, c.Principal, key), want, ttl)
	if err != nil {
		return "", false, stateErr(err, ErrUnavailable)
	}
	if got.BodyDigest != digest {
		return "", false, ErrIdempotencyKey
	}
	return got.RequestID, took, nil
}

// recoverKeyed returns the request a repeated key made; if its creator has
// not written it yet (or crashed first), it creates it from this
// JCS-equal body, and concurrent repeats converge on the one id.
func (s *Service) recoverKeyed(ctx context.Context, c Caller, id domain.RequestID, in SubmitInput, capability domain.Capability, timeout time.Duration) (kvstate.Record, bool, error) {
	rec, err := s.store.GetRequest(ctx, c.Tenant.ID, id)
	if errors.Is(err, kvstate.ErrNotFound) {
		rec, err = s.create(ctx, c, id, in, capability, timeout)
	}
	return rec, false, err
}

func (s *Service) create(ctx context.Context, c Caller, id domain.RequestID, in SubmitInput, capability domain.Capability, timeout time.Duration) (kvstate.Record, error) {
	r, err := s.newRequest(c, id, in, capability, timeout)
	if err != nil {
		return kvstate.Record{}, err
	}
	Decide(ctx, s.checker, c.Tenant, c.Token.Policy, r)
	rec, err := s.views.WriteRequest(c.Tenant.ID, id, func() (kvstate.Record, error) {
		rec, err := s.store.CreateRequest(ctx, r)
		if errors.Is(err, kvstate.ErrExists) { // it exists: a read that finds none is stale
			rec, err = s.store.GetRequestAfter(ctx, c.Tenant.ID, id, 1)
		}
		return rec, err
	})
	if err != nil {
		return kvstate.Record{}, stateErr(err, ErrUnavailable)
	}
	return rec, nil
}

func (s *Service) newRequest(c Caller, id domain.RequestID, in SubmitInput, capability domain.Capability, timeout time.Duration) (*domain.Request, error) {
	now := s.now().UTC()
	subject := domain.Subject{Kind: domain.SubjectTool}
	if in.Subject != nil {
		subject = *in.Subject
	}
	r := &domain.Request{
		ID: id, Tenant: c.Tenant.ID, Agent: domain.AgentID(c.Principal.ID),
		Session: in.Session, Turn: in.Turn, ToolCallID: in.ToolCallID,
		Capability: capability, Arguments: in.Arguments, Subject: subject,
		Connection: in.Connection, Reason: in.Reason, Timeout: FormatDuration(timeout),
		Chain: deciders.ChainFor(s.views, c.Tenant.ID, domain.AgentID(c.Principal.ID), in.Session), Endorsements: []domain.Endorsement{},
		CreatedAt: now, DeadlineAt: now.Add(timeout), RequiredApprovals: 1,
	}
	if capability.Action == domain.ActionToolsCall {
		r.Tool = capability.Target
	}
	if subject.Kind == domain.SubjectShell {
		r.SetStages(stagesOf(subject.Command))
	}
	digest, err := domain.CallDigest(r.Binding())
	if err != nil {
		return nil, invalid("arguments", "%v", err)
	}
	r.CallDigest = digest
	return r, nil
}

// FormatDuration writes d as Go's duration syntax without zero units:
// 30m, 1h30m, 24h, 1.5s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
