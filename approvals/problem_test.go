package approvals

import (
	"errors"
	"fmt"
	"testing"
)

func TestProblemFor(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		code   string
		field  string
		reason string
	}{
		{"unknown error is internal, never 503", errors.New("boom"), 500, "Internal", "", ""},
		{"unavailable", errors.Join(ErrUnavailable, errors.New("kv down")), 503, "Unavailable", "", ""},
		{"unauthenticated", errNoToken, 401, "Unauthenticated", "", ""},
		{"forbidden", errNotAgent, 403, "Forbidden", "", ""},
		{"invalid names its field", invalid("expected", "required"), 400, "InvalidRequest", "expected", ""},
		{"claim carries its reason", &ClaimError{Reason: "digest_mismatch"}, 409, "RequestConflict", "", "digest_mismatch"},
		{"wrapped conflict", fmt.Errorf("answer: %w", conflict("stale")), 409, "RequestConflict", "", ""},
		{"grant not found", ErrGrantNotFound, 404, "GrantNotFound", "", ""},
		{"idempotency", ErrIdempotencyKey, 422, "IdempotencyKeyReused", "", ""},
		{"rate limited", ErrRateLimited, 429, "RateLimited", "", ""},
		{"a surface's own problem", NewProblem(413, "PayloadTooLarge", "too big", "").Err(), 413, "PayloadTooLarge", "", ""},
	}
	for _, c := range cases {
		p := ProblemFor(c.err)
		if p.Status != c.status || p.Error != c.code || p.Field != c.field || p.Reason != c.reason {
			t.Errorf("%s: got %d %s field=%q reason=%q, want %d %s field=%q reason=%q",
				c.name, p.Status, p.Error, p.Field, p.Reason, c.status, c.code, c.field, c.reason)
		}
		if p.Type != "https://countersign.dev/problems/"+c.code || p.Title == "" {
			t.Errorf("%s: type %q title %q", c.name, p.Type, p.Title)
		}
	}
}

func TestAuthenticateDetail(t *testing.T) {
	if got, want := ProblemFor(errNoToken).Detail, "a valid bearer token is required"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
