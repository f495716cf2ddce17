package approvals

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// Each refusal is made where its rule lives, with the status, code, field,
// reason and detail the client sees; errors.Is still matches the sentinel.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		sentinel error
		status   int
		code     string
		field    string
		reason   string
		detail   string
	}{
		{"unauthenticated", errNoToken, ErrUnauthenticated, 401, "Unauthenticated", "", "", "a valid bearer token is required"},
		{"forbidden", errNoPolicy, ErrForbidden, 403, "Forbidden", "", "", "this operation is not offered"},
		{"invalid names its field", invalid("expected", "required"), nil, 400, "InvalidRequest", "expected", "", "required"},
		{"claim carries its reason", refuseClaim("digest_mismatch"), ErrConflict, 409, "RequestConflict", "", "digest_mismatch", "the approval cannot be claimed: digest_mismatch"},
		{"wrapped conflict", fmt.Errorf("answer: %w", conflict("stale")), ErrConflict, 409, "RequestConflict", "", "", "request conflict: stale"},
		{"grant not found", ErrGrantNotFound, ErrGrantNotFound, 404, "GrantNotFound", "", "", "grant not found"},
		{"idempotency", ErrIdempotencyKey, ErrIdempotencyKey, 422, "IdempotencyKeyReused", "", "", "idempotency key reused with a different body"},
		{"rate limited", ErrRateLimited, ErrRateLimited, 429, "RateLimited", "", "", "too many long-polls held; retry shortly"},
		{"state not found", stateErr(fmt.Errorf("get: %w", kvstate.ErrNotFound), ErrOtherNotFound), ErrOtherNotFound, 404, "NotFound", "", "", "not found"},
		{"lost compare-and-set", stateErr(kvstate.ErrConflict, ErrNotFound), ErrConflict, 409, "RequestConflict", "", "", "request conflict"},
		{"NATS down: 503, its text only in logs", stateErr(errors.Join(kvstate.ErrUnavailable, errors.New("nats: timeout")), ErrNotFound), ErrUnavailable, 503, "Unavailable", "", "", "state unavailable"},
		{"deadline", stateErr(context.DeadlineExceeded, ErrNotFound), ErrUnavailable, 503, "Unavailable", "", "", "state unavailable"},
		{"anything else is internal, never 503", stateErr(errors.New("boom"), ErrNotFound), nil, 500, "Internal", "", "", "the server failed unexpectedly"},
	}
	for _, c := range cases {
		p := problem.From(c.err)
		if p.Status != c.status || p.Error != c.code || p.Field != c.field || p.Reason != c.reason || p.Detail != c.detail {
			t.Errorf("%s: got %d %s field=%q reason=%q detail=%q, want %d %s field=%q reason=%q detail=%q", c.name,
				p.Status, p.Error, p.Field, p.Reason, p.Detail, c.status, c.code, c.field, c.reason, c.detail)
		}
		if c.sentinel != nil && !errors.Is(c.err, c.sentinel) {
			t.Errorf("%s: errors.Is(%v, %v) = false", c.name, c.err, c.sentinel)
		}
	}
}

// The kvstate error a conflict or an outage came from stays visible to
// errors.Is and to the logs.
func TestStateErrKeepsItsCause(t *testing.T) {
	if err := stateErr(kvstate.ErrIllegal, ErrNotFound); !errors.Is(err, kvstate.ErrIllegal) || !errors.Is(err, ErrConflict) {
		t.Errorf("stateErr(ErrIllegal) = %v, want ErrConflict caused by kvstate.ErrIllegal", err)
	}
}
