package approvals

import (
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
)

// opTable is SPEC §5's scope column as the spec states it, written apart
// from policies so that a change to either shows here: each operation's
// scope ("" for any valid token) and principal kind ("" for any).
var opTable = []struct {
	op    Op
	scope string
	kind  string
}{
	{OpSubmit, domain.ScopeRequestsWrite, domain.KindAgent},
	{OpGet, "", ""},
	{OpList, domain.ScopeApprovalsRead, ""},
	{OpAnswer, domain.ScopeApprovalsWrite, ""},
	{OpCancel, domain.ScopeRequestsWrite, domain.KindAgent},
	{OpClaim, domain.ScopeRequestsWrite, domain.KindAgent},
	{OpGrants, domain.ScopeApprovalsRead, ""},
	{OpRevoke, domain.ScopeApprovalsWrite, ""},
	{OpRules, domain.ScopeApprovalsRead, ""},
	{OpAddRule, domain.ScopeApprovalsWrite, ""},
	{OpDeleteRule, domain.ScopeApprovalsWrite, ""},
	{OpRegisterAgent, domain.ScopeRequestsWrite, domain.KindAgent},
	{OpRetireAgent, domain.ScopeApprovalsWrite, ""},
	{OpEndDelegation, domain.ScopeRequestsWrite, ""},
	{OpEvents, domain.ScopeApprovalsRead, ""},
	{OpWatch, domain.ScopeApprovalsRead, ""},
	{OpConfig, domain.ScopeAdmin, ""},
	{OpDiscover, domain.ScopeAdmin, ""},
	{OpAudit, domain.ScopeAdmin, ""},
	{OpPeople, domain.ScopeApprovalsRead, ""},
}

// Every scope a token may hold but admin, which holds them all.
var plainScopes = []string{domain.ScopeRequestsWrite, domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite, domain.ScopeEventsRead}

// The table and policies name the same operations: an operation added to
// one only turns this red.
func TestOpTableCoversEveryPolicy(t *testing.T) {
	seen := map[Op]bool{}
	for _, row := range opTable {
		if seen[row.op] {
			t.Errorf("%s is in the table twice", row.op)
		}
		seen[row.op] = true
		if _, ok := policies[row.op]; !ok {
			t.Errorf("%s has no policy: every surface refuses it", row.op)
		}
	}
	for op := range policies {
		if !seen[op] {
			t.Errorf("%s has a policy the spec's table does not state", op)
		}
	}
}

// For every operation: a token with exactly its scope and a principal of
// its kind is let through; the same principal with every other scope but
// that one is refused for the scope; a principal of the other kind is
// refused for its kind, after the scope; admin passes every scope check,
// never the kind check.
func TestPermitEveryOp(t *testing.T) {
	kinds := []string{domain.KindAgent, domain.KindPerson, "service"}
	for _, row := range opTable {
		t.Run(string(row.op), func(t *testing.T) {
			for _, kind := range kinds {
				p := domain.Ref{Kind: kind, ID: "x-1"}
				kindOK := row.kind == "" || row.kind == kind
				check := func(name string, scopes []string, want string) {
					t.Helper()
					err := Permit(Caller{Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}, row.op)
					got := ""
					if err != nil {
						if !errors.Is(err, ErrForbidden) {
							t.Errorf("%s %s: %v is not ErrForbidden", kind, name, err)
						}
						got = strings.TrimPrefix(err.Error(), "Forbidden: ")
					}
					if got != want {
						t.Errorf("%s %s: Permit = %q, want %q", kind, name, got, want)
					}
				}
				kindRefusal := ""
				if !kindOK {
					kindRefusal = "only " + row.kind + " principals may do this"
				}
				// Its own scope alone.
				own := []string{}
				if row.scope != "" {
					own = []string{row.scope}
				}
				check("with its scope", own, kindRefusal)
				// Admin holds every scope.
				check("with admin", []string{domain.ScopeAdmin}, kindRefusal)
				if row.scope == "" {
					check("with no scope", nil, kindRefusal)
					continue
				}
				// Every other scope, not its own: refused for the scope,
				// whatever the kind.
				var others []string
				for _, s := range plainScopes {
					if s != row.scope {
						others = append(others, s)
					}
				}
				check("without its scope", others, "this token lacks the "+row.scope+" scope")
				check("with no scope", nil, "this token lacks the "+row.scope+" scope")
			}
		})
	}
}

// An operation missing from the table is refused on every token, admin
// too, and the empty Op as well: the table fails closed.
func TestPermitRefusesAnOpMissingFromTheTable(t *testing.T) {
	for _, op := range []Op{"", "format_disk", "Submit", "submit ", OpSubmit + "s"} {
		for _, kind := range []string{domain.KindAgent, domain.KindPerson} {
			p := domain.Ref{Kind: kind, ID: "x-1"}
			err := Permit(Caller{Principal: p, Token: domain.Token{Principal: p, Scopes: append([]string{domain.ScopeAdmin}, plainScopes...)}}, op)
			if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "this operation is not offered") {
				t.Errorf("Permit(%s, %q) = %v, want the operation refused", kind, op, err)
			}
		}
	}
}
