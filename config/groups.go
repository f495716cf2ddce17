package config

import (
	"github.com/countersign/countersign/domain"
)

// groups checks groups and approval_policies (SPEC §12) and carries them
// into t: a group names known members, each once; a policy names a known
// group, needs 1 to the group's size of its people, and its match patterns
// are capability patterns. Every refusal names the line.
func (tc *TenantConfig) groups(t *domain.Tenant) error {
	t.Groups = map[domain.GroupID]*domain.Group{}
	for _, gc := range tc.Groups {
		g, err := gc.group(t)
		if err != nil {
			return err
		}
		t.Groups[g.ID] = g
	}
	seen := map[string]bool{}
	for _, pc := range tc.ApprovalPolicies {
		if seen[pc.ID] {
			return lineErr(pc.line, "duplicate approval policy id %q", pc.ID)
		}
		seen[pc.ID] = true
		p, err := pc.policy(t)
		if err != nil {
			return err
		}
		t.ApprovalPolicies = append(t.ApprovalPolicies, p)
	}
	return nil
}

func (gc *GroupConfig) group(t *domain.Tenant) (*domain.Group, error) {
	if !domain.ConfigIDPattern.MatchString(gc.ID) {
		return nil, lineErr(gc.line, "group id %q must match [A-Za-z0-9_-]{1,64}", gc.ID)
	}
	if t.Groups[domain.GroupID(gc.ID)] != nil {
		return nil, lineErr(gc.line, "duplicate group id %q", gc.ID)
	}
	if len(gc.Members) == 0 {
		return nil, lineErr(gc.line, "group %q: members: at least one member", gc.ID)
	}
	g := &domain.Group{ID: domain.GroupID(gc.ID)}
	for i, m := range gc.Members {
		line := lineOf(gc.memberLines, i, gc.line)
		switch {
		case t.Members[domain.MemberID(m)] == nil:
			return nil, lineErr(line, "group %q: members: unknown member %q", gc.ID, m)
		case containsMember(g.Members, domain.MemberID(m)):
			return nil, lineErr(line, "group %q: members: %q appears twice", gc.ID, m)
		}
		g.Members = append(g.Members, domain.MemberID(m))
	}
	return g, nil
}

func containsMember(ms []domain.MemberID, m domain.MemberID) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func (pc *ApprovalPolicyConfig) policy(t *domain.Tenant) (domain.ApprovalPolicy, error) {
	p := domain.ApprovalPolicy{ID: pc.ID, Match: pc.Match, Approve: 1}
	if !domain.ConfigIDPattern.MatchString(pc.ID) {
		return p, lineErr(pc.line, "approval policy id %q must match [A-Za-z0-9_-]{1,64}", pc.ID)
	}
	if len(pc.Match) == 0 {
		return p, lineErr(pc.line, "approval policy %q: match: at least one capability pattern", pc.ID)
	}
	for i, m := range pc.Match {
		if err := domain.CheckPattern(m); err != nil {
			return p, lineErr(lineOf(pc.matchLines, i, pc.line), "approval policy %q: match: %v", pc.ID, err)
		}
	}
	if pc.Approvers == nil || pc.Approvers.Group == "" {
		return p, lineErr(max(pc.approversLine, pc.line), "approval policy %q: approvers: group is required", pc.ID)
	}
	g := t.Groups[domain.GroupID(pc.Approvers.Group)]
	if g == nil {
		return p, lineErr(max(pc.approversLine, pc.line), "approval policy %q: approvers: unknown group %q", pc.ID, pc.Approvers.Group)
	}
	p.Group = g.ID
	switch pc.Mode {
	case "", domain.ModeEnforce:
	case domain.ModeShadow:
		p.Shadow = true
	default:
		return p, lineErr(pc.line, "approval policy %q: mode: %q is neither enforce nor shadow", pc.ID, pc.Mode)
	}
	if pc.Approve != nil {
		p.Approve = int(*pc.Approve)
	}
	switch {
	case p.Approve < 1:
		return p, lineErr(max(pc.approveLine, pc.line), "approval policy %q: approve: %d is less than 1", pc.ID, p.Approve)
	case p.Approve > len(g.Members):
		return p, lineErr(max(pc.approveLine, pc.line), "approval policy %q: approve: %d is more than group %q's %d members", pc.ID, p.Approve, g.ID, len(g.Members))
	}
	return p, nil
}
