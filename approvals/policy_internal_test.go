package approvals

import (
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
)

// Permit is SPEC §5's scope column: scope first, then the principal kind;
// an operation without a policy is refused.
func TestPermit(t *testing.T) {
	agent := domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}
	person := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	caller := func(p domain.Ref, scopes ...string) Caller {
		return Caller{Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}
	}
	for _, tc := range []struct {
		name string
		c    Caller
		op   Op
		want string // "" allowed, else the refusal's detail
	}{
		{"agent submits", caller(agent, domain.ScopeRequestsWrite), OpSubmit, ""},
		{"person submits", caller(person, domain.ScopeRequestsWrite), OpSubmit, "only agent principals may do this"},
		{"scope before kind", caller(person), OpClaim, "this token lacks the requests:write scope"},
		{"person answers", caller(person, domain.ScopeApprovalsWrite), OpAnswer, ""},
		{"agent answers without the scope", caller(agent, domain.ScopeRequestsWrite), OpAnswer, "this token lacks the approvals:write scope"},
		{"get takes any token", caller(person), OpGet, ""},
		{"admin alone reads the config", caller(person, domain.ScopeApprovalsRead), OpConfig, "this token lacks the admin scope"},
		{"no policy", caller(person, domain.ScopeAdmin), Op("format_disk"), "this operation is not offered"},
	} {
		err := Permit(tc.c, tc.op)
		var got string
		if err != nil {
			if !errors.Is(err, ErrForbidden) {
				t.Errorf("%s: %v is not ErrForbidden", tc.name, err)
			}
			got = strings.TrimPrefix(err.Error(), "Forbidden: ")
		}
		if got != tc.want {
			t.Errorf("%s: Permit = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestValidTraceparent(t *testing.T) {
	for tp, want := range map[string]bool{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00": true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0":  false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g": false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01": false,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01": false,
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": false,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": false,
		"": false,
	} {
		if got := validTraceparent(tp); got != want {
			t.Errorf("validTraceparent(%q) = %v, want %v", tp, got, want)
		}
	}
}
