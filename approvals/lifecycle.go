package approvals

import (
	"context"
	"errors"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// Cancel ends a pending request at its requester's word (the call was
// abandoned). Errors: ErrNotFound, ErrForbidden (not the requester),
// ErrConflict (terminal or overdue), ErrUnavailable.
func (s *Service) Cancel(ctx context.Context, c Caller, id domain.RequestID) (kvstate.Record, error) {
	rec, err := s.requesterRecord(ctx, c, id)
	if err != nil {
		return rec, err
	}
	return s.transition(ctx, rec, s.cancel(""))
}

// CancelTurn cancels every pending request the caller made with turn: an
// interrupted turn leaves nothing waiting (SPEC §5). It returns the ids it
// cancelled, oldest first, always a slice; another agent's requests are
// never touched. A request that ended meanwhile is left alone. Errors:
// InvalidRequest (no turn, or a turn longer than any a request carries).
func (s *Service) CancelTurn(ctx context.Context, c Caller, turn string) ([]domain.RequestID, error) {
	if turn == "" {
		return nil, invalid("turn", "turn is required")
	}
	if len(turn) > domain.MaxOpaqueIDLen {
		return nil, invalid("turn", "at most %d bytes", domain.MaxOpaqueIDLen)
	}
	agent := domain.AgentID(c.Principal.ID)
	cancelled := []domain.RequestID{}
	note := "turn " + turn + " was interrupted"
	for _, rec := range s.views.PendingOfAgent(c.Tenant.ID, agent) {
		if rec.Status != domain.StatusPending || rec.Turn != turn || rec.Agent != agent {
			continue
		}
		_, err := s.transition(ctx, kvstate.Record{Request: domain.Request{Tenant: c.Tenant.ID, ID: rec.ID}}, s.cancel(note))
		switch {
		case err == nil:
			cancelled = append(cancelled, rec.ID)
		case errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound):
		default:
			return cancelled, err
		}
	}
	return cancelled, nil
}

// TurnCancelled is the answer to a turn's cancel: the ids it cancelled.
type TurnCancelled struct {
	Cancelled []domain.RequestID `json:"cancelled"`
}

// cancel is the cancel transition: a pending request before its deadline
// becomes cancelled, by its requester (SPEC §4), with note kept as the
// decision's note; otherwise ErrConflict.
func (s *Service) cancel(note string) kvstate.Mutation {
	return func(r *domain.Request) (string, error) {
		if r.Status.Terminal() {
			return "", conflict("request is %s", r.Status)
		}
		now := s.now().UTC()
		if !now.Before(r.DeadlineAt) {
			return "", conflict("the request's deadline has passed")
		}
		r.Status = domain.StatusCancelled
		r.Decision = &domain.Decision{Status: domain.StatusCancelled, By: domain.Ref{Kind: domain.KindAgent, ID: string(r.Agent)},
			Note: note, DecidedAt: now}
		return events.TypeRequestCancelled, nil
	}
}

// Claim spends an approval right before the call runs: one compare-and-set
// that succeeds once, only while the request is approved, unexpired and
// the digest matches (SPEC §4). A refusal is ErrConflict with the claim's reason and changes
// nothing. Errors also: ErrNotFound, ErrForbidden, InvalidRequest.
func (s *Service) Claim(ctx context.Context, c Caller, id domain.RequestID, digest string) (kvstate.Record, error) {
	if digest == "" {
		return kvstate.Record{}, invalid("call_digest", "call_digest is required")
	}
	rec, err := s.requesterRecord(ctx, c, id)
	if err != nil {
		return rec, err
	}
	return s.transition(ctx, rec, func(r *domain.Request) (string, error) {
		now := s.now().UTC()
		switch {
		case r.Status != domain.StatusApproved:
			return "", refuseClaim("not_approved")
		case r.ClaimedAt != nil:
			return "", refuseClaim("already_claimed")
		case r.CallDigest != digest:
			return "", refuseClaim("digest_mismatch")
		case r.Decision == nil || r.Decision.ExpiresAt == nil || !now.Before(*r.Decision.ExpiresAt):
			return "", refuseClaim("approval_expired")
		}
		r.ClaimedAt = &now
		return events.TypeRequestClaimed, nil
	})
}

// requesterRecord reads a request that only its requester may change.
func (s *Service) requesterRecord(ctx context.Context, c Caller, id domain.RequestID) (kvstate.Record, error) {
	rec, err := s.mirrored(ctx, c, id)
	if err == nil && (c.Principal.Kind != domain.KindAgent || string(rec.Agent) != c.Principal.ID) {
		return kvstate.Record{}, forbid("only the requester may do this")
	}
	return rec, err
}

// transition applies fn from rec (a record just read, or only its tenant
// and id, then read first) and puts the result in the mirror at once.
func (s *Service) transition(ctx context.Context, rec kvstate.Record, fn kvstate.Mutation) (kvstate.Record, error) {
	var next kvstate.Record
	var err error
	if rec.KVRevision == 0 {
		rec, err = s.store.PeekRequest(ctx, rec.Tenant, rec.ID, s.seenRevision(rec.Tenant, rec.ID))
	}
	if err == nil {
		next, err = s.views.WriteRequest(rec.Tenant, rec.ID, func() (kvstate.Record, error) { return s.store.TransitionFrom(ctx, rec, fn) })
	}
	if err != nil {
		return next, stateErr(err, ErrNotFound)
	}
	return next, nil
}

// Expire ends a request still pending at or after its deadline: no
// decision was made in time. It does nothing to any other request.
func (s *Service) Expire(ctx context.Context, tenant domain.TenantID, id domain.RequestID) error {
	_, err := s.transition(ctx, kvstate.Record{Request: domain.Request{Tenant: tenant, ID: id}}, func(r *domain.Request) (string, error) {
		now := s.now().UTC()
		if r.Status != domain.StatusPending || now.Before(r.DeadlineAt) {
			return "", errNothingToDo
		}
		r.Status = domain.StatusExpired
		r.Decision = &domain.Decision{Status: domain.StatusExpired, By: domain.Ref{Kind: domain.KindDeadline}, DecidedAt: now}
		return events.TypeRequestExpired, nil
	})
	return ignoreNothing(err)
}

// PassUp moves a request whose agent decider's review ran out (still
// waiting on approver at revision rev) to the decider above.
func (s *Service) PassUp(ctx context.Context, tenant domain.TenantID, id domain.RequestID, approver domain.Ref, rev uint64) error {
	_, err := s.transition(ctx, kvstate.Record{Request: domain.Request{Tenant: tenant, ID: id}}, func(r *domain.Request) (string, error) {
		if r.Status != domain.StatusPending || r.Revision != rev || r.Approver == nil || *r.Approver != approver {
			return "", errNothingToDo
		}
		return s.passUp(r, approver)
	})
	return ignoreNothing(err)
}

var errNothingToDo = errors.New("approvals: nothing to do")

func ignoreNothing(err error) error {
	if errors.Is(err, errNothingToDo) || errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
