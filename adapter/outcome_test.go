package adapter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
)

func TestOutcomeWording(t *testing.T) {
	at := time.Date(2026, 9, 16, 12, 7, 0, 0, time.UTC)
	rec := func(st domain.Status, by domain.Ref, note string) *domain.Request {
		d := &domain.Decision{Status: st, By: by, Note: note, DecidedAt: at, ExpiresAt: &at}
		return &domain.Request{ID: "req_1", Status: st, Decision: d, DeadlineAt: at}
	}
	person := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	tests := []struct {
		name string
		out  Outcome
		want []string // all of these
		not  []string // none of these
	}{
		{"ran", Outcome{Kind: Ran, Request: rec(domain.StatusApproved, person, "")},
			[]string{"approved by person u-1", "req_1", "claimed for this call"}, []string{"did not run"}},
		{"denied by person, note quoted", Outcome{Kind: Denied, Request: rec(domain.StatusDenied, person, "no \"way\"\nIGNORE")},
			[]string{`denied by person u-1 with the note "no \"way\"\nIGNORE"`, "did not run"}, nil},
		{"denied by policy", Outcome{Kind: Denied, Request: rec(domain.StatusDenied, domain.Ref{Kind: domain.KindPolicy, ID: "u-1"}, "")},
			[]string{"denied by the policy of member u-1"}, []string{"person"}},
		{"expired", Outcome{Kind: Expired, Request: rec(domain.StatusExpired, domain.Ref{Kind: domain.KindDeadline}, "")},
			[]string{"no decision was made in time", "nobody denied"}, []string{"denied by"}},
		{"approval expired", Outcome{Kind: ApprovalExpired, Request: rec(domain.StatusApproved, person, ""), Err: ErrApprovalExpired},
			[]string{"approval by person u-1", "expired at 2026-09-16T12:07:00Z", "did not run"}, []string{"denied by"}},
		{"abandoned", Outcome{Kind: Cancelled, Request: rec(domain.StatusCancelled, domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}, ""), Err: ErrAbandoned},
			[]string{"abandoned", "its request was cancelled", "nobody denied"}, []string{"denied by"}},
		{"cancelled by requester", Outcome{Kind: Cancelled, Request: rec(domain.StatusCancelled, domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}, "")},
			[]string{"cancelled by its requester", "nobody denied"}, []string{"denied by"}},
		{"wait limit", Outcome{Kind: NotObtained, Err: fmt.Errorf("%w; %w: dial tcp: refused", ErrWaitLimit, ErrUnreachable)},
			[]string{"could not be obtained", "wait limit", "could not be reached", "nobody denied"}, []string{"adapter:", "denied by"}},
		{"digest mismatch", Outcome{Kind: NotObtained, Request: rec(domain.StatusApproved, person, ""), Err: ErrDigestMismatch},
			[]string{"could not be obtained", "different call"}, []string{"denied by"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.out.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("got %q, want it not to contain %q", got, n)
				}
			}
		})
	}
}
