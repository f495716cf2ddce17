package approvals

import (
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/events"
)

// opTable is SPEC §5's scope column as the spec states it, written apart
// from policies so that a change to either shows here: each operation's
// scope ("" for any valid token) and principal kind ("" for any).
var opTable = []struct {
	op    Op
	scope string
	kind  string
}{
	{OpSubmit, events.ScopeRequestsWrite, events.KindAgent},
	{OpGet, "", ""},
	{OpList, events.ScopeApprovalsRead, ""},
	{OpAnswer, events.ScopeApprovalsWrite, ""},
	{OpCancel, events.ScopeRequestsWrite, events.KindAgent},
	{OpClaim, events.ScopeRequestsWrite, events.KindAgent},
	{OpGrants, events.ScopeApprovalsRead, ""},
	{OpRevoke, events.ScopeApprovalsWrite, ""},
	{OpRules, events.ScopeApprovalsRead, ""},
	{OpAddRule, events.ScopeApprovalsWrite, ""},
	{OpDeleteRule, events.ScopeApprovalsWrite, ""},
	{OpRegisterAgent, events.ScopeRequestsWrite, events.KindAgent},
	{OpRetireAgent, events.ScopeApprovalsWrite, ""},
	{OpEndDelegation, events.ScopeRequestsWrite, ""},
	{OpEvents, events.ScopeApprovalsRead, ""},
	{OpWatch, events.ScopeApprovalsRead, ""},
	{OpConfig, events.ScopeAdmin, ""},
	{OpDiscover, events.ScopeAdmin, ""},
	{OpAudit, events.ScopeAdmin, ""},
	{OpPeople, events.ScopeApprovalsRead, ""},
}

// Every scope a token may hold but admin, which holds them all.
var plainScopes = []string{events.ScopeRequestsWrite, events.ScopeApprovalsRead, events.ScopeApprovalsWrite, events.ScopeEventsRead}

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
	kinds := []string{events.KindAgent, events.KindPerson, "service"}
	for _, row := range opTable {
		t.Run(string(row.op), func(t *testing.T) {
			for _, kind := range kinds {
				p := events.Ref{Kind: kind, ID: "x-1"}
				kindOK := row.kind == "" || row.kind == kind
				check := func(name string, scopes []string, want string) {
					t.Helper()
					err := Permit(Caller{Principal: p, Token: events.Token{Principal: p, Scopes: scopes}}, row.op)
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
				check("with admin", []string{events.ScopeAdmin}, kindRefusal)
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
		for _, kind := range []string{events.KindAgent, events.KindPerson} {
			p := events.Ref{Kind: kind, ID: "x-1"}
			err := Permit(Caller{Principal: p, Token: events.Token{Principal: p, Scopes: append([]string{events.ScopeAdmin}, plainScopes...)}}, op)
			if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "this operation is not offered") {
				t.Errorf("Permit(%s, %q) = %v, want the operation refused", kind, op, err)
			}
		}
	}
}
