package approvals

import "github.com/countersign/countersign/events"

// PersonCaller is the caller a member answers as from a surface that
// proved who they are without a bearer token: a decision link (its MAC)
// or a Slack click (Slack's signature and the member's slack_user_id). It
// holds approvals:read and approvals:write and nothing else; false if the
// tenant or member is not configured.
func (s *Service) PersonCaller(tenant events.TenantID, m events.MemberID) (Caller, bool) {
	t, ok := s.views.Tenant(tenant)
	if !ok || t.Members[m] == nil {
		return Caller{}, false
	}
	p := events.Ref{Kind: events.KindPerson, ID: string(m)}
	return Caller{Tenant: t, Principal: p, Token: events.Token{Principal: p,
		Scopes: []string{events.ScopeApprovalsRead, events.ScopeApprovalsWrite}}}, true
}
