package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// An error nobody named is 500 Internal, never a retryable 503; NATS
// unavailability, as approvals reports it, stays 503 Unavailable.
func TestProblemFromUnknownIsInternal(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{errors.New("nats: header too large"), http.StatusInternalServerError, "Internal"},
		{fmt.Errorf("approvals: submit: %w", errors.New("boom")), http.StatusInternalServerError, "Internal"},
		{errors.Join(approvals.ErrUnavailable, kvstate.ErrUnavailable), http.StatusServiceUnavailable, "Unavailable"},
		{errors.Join(approvals.ErrUnavailable, context.DeadlineExceeded), http.StatusServiceUnavailable, "Unavailable"},
		{approvals.ErrRateLimited, http.StatusTooManyRequests, "RateLimited"},
	} {
		p := problem.From(tc.err)
		if p.Status != tc.status || p.Error != tc.code {
			t.Errorf("problem.From(%v) = %d %s, want %d %s", tc.err, p.Status, p.Error, tc.status, tc.code)
		}
	}
}
