package approvals

import (
	"github.com/countersign/countersign/domain"
)

// PersonCaller is the caller a member answers as from a surface that
// proved who they are without a bearer token: a decision link (its MAC)
// or a Slack click (Slack's signature and the member's slack_user_id). It
// holds approvals:read and approvals:write and nothing else; false if the
// tenant or member is not configured.
func (s *Service) PersonCaller(tenant domain.TenantID, m domain.MemberID) (Caller, bool) {
	t, ok := s.views.Tenant(tenant)
	if !ok || t.Members[m] == nil {
		return Caller{}, false
	}
	p := domain.Ref{Kind: domain.KindPerson, ID: string(m)}
	return Caller{Tenant: t, Principal: p, Token: domain.Token{Principal: p,
		Scopes: []string{domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite}}}, true
}
