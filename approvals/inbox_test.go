package approvals_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

const groupsYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-1, u-2]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_main, member: u-1}
`

// A request waiting on a group is in the inbox of every member, pending
// and once it ended (SPEC §12); in no one else's. The list merges a
// person's own requests with their groups', in id order, each once, and
// pages across them.
func TestListHoldsTheGroupsOfAPerson(t *testing.T) {
	store, views, tenants := testutil.NewState(t, groupsYAML)
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	person := func(id string) approvals.Caller {
		p := domain.Ref{Kind: domain.KindPerson, ID: id}
		return approvals.Caller{Tenant: tenants[0], Principal: p, Token: domain.Token{Principal: p, Scopes: []string{domain.ScopeApprovalsRead}}}
	}
	finance := domain.Ref{Kind: domain.KindGroup, ID: "finance"}
	u1 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	put := func(approver domain.Ref, end domain.Status, by domain.Ref) domain.RequestID {
		now := time.Now().UTC()
		r := &domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Agent: "agt_main", Status: domain.StatusPending,
			Capability: domain.Capability{Action: "tools.call", Target: "issue_refund"}, Arguments: []byte(`{}`), Chain: []domain.AgentID{"agt_main"},
			Approver: &approver, RequiredApprovals: 2, CreatedAt: now, DeadlineAt: now.Add(time.Hour)}
		rec, err := store.CreateRequest(ctx, r)
		if err == nil && end != "" {
			rec, err = store.Transition(ctx, "acme", r.ID, func(r *domain.Request) (string, error) {
				r.Status, r.Decision = end, &domain.Decision{Status: end, By: by, DecidedAt: time.Now()}
				if end == domain.StatusExpired {
					return events.TypeRequestExpired, nil
				}
				return events.TypeRequestDecided, nil
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		views.Requests().Apply(kvstate.RequestKey("acme", r.ID), rec, rec.KVRevision)
		return r.ID
	}
	deadline := domain.Ref{Kind: "deadline"}
	own := put(u1, "", deadline)
	group := put(finance, "", deadline)
	ended := put(finance, domain.StatusExpired, deadline)
	denied := put(finance, domain.StatusDenied, u1) // in u-1's own scope and finance's
	own2 := put(u1, "", deadline)
	ids := func(rs []domain.Request) []domain.RequestID {
		var out []domain.RequestID
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		who    string
		status []domain.Status
		want   []domain.RequestID
	}{
		{"u-1", nil, []domain.RequestID{own, group, ended, denied, own2}},
		{"u-1", []domain.Status{domain.StatusPending}, []domain.RequestID{own, group, own2}},
		{"u-2", nil, []domain.RequestID{group, ended, denied}},
		{"u-2", []domain.Status{domain.StatusPending}, []domain.RequestID{group}},
		{"u-2", []domain.Status{domain.StatusExpired}, []domain.RequestID{ended}},
		{"u-3", nil, nil},
	} {
		got, next, err := svc.List(ctx, person(tc.who), approvals.ListFilter{Statuses: tc.status, Limit: 50})
		if err != nil || next != "" || !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s %v: %v %q %v, want %v", tc.who, tc.status, ids(got), next, err, tc.want)
		}
	}
	// Pages of one across u-1's own scope and finance's: each once, in order.
	var paged []domain.RequestID
	cursor := ""
	for range 10 {
		got, next, err := svc.List(ctx, person("u-1"), approvals.ListFilter{Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(got)...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if want := []domain.RequestID{own, group, ended, denied, own2}; !reflect.DeepEqual(paged, want) {
		t.Errorf("u-1 paged by one: %v, want %v", paged, want)
	}
}
