package domain

import (
	"encoding/json"
	"time"
)

// KindGroup is an approver that is a group of people (SPEC §12):
// {"kind": "group", "id": "finance"}.
const KindGroup = "group"

// GroupID names a configured group; it matches ConfigIDPattern.
type GroupID string

// Group is people who answer together at the top of a chain (SPEC §12).
type Group struct {
	ID      GroupID
	Members []MemberID // in file order, each a member of the tenant, once
}

// ApprovalPolicy says who answers at the top of the chain for the
// capabilities it matches, and how many distinct people must allow
// (SPEC §12). The first policy that matches, in file order, applies.
type ApprovalPolicy struct {
	ID      string
	Match   []string // capability patterns
	Group   GroupID  // approvers.group
	Approve int      // distinct people who must allow; 1 by default
	Shadow  bool     // mode: shadow: evaluated, never deciding (SPEC §16)
}

// Approval is one person's allow counted towards a request's quorum.
type Approval struct {
	By    Ref       `json:"by"`
	At    time.Time `json:"at"`
	Scope string    `json:"scope"`
	Note  string    `json:"note"`
}

// Approvals lists a request's approvals. It encodes as [] when empty, never
// null (SPEC §12: the record's approvals is always an array).
type Approvals []Approval

// MarshalJSON encodes a, nil as [].
func (a Approvals) MarshalJSON() ([]byte, error) {
	if a == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Approval(a))
}

// By reports whether person p has an approval in a.
func (a Approvals) By(p Ref) bool {
	for _, x := range a {
		if x.By == p {
			return true
		}
	}
	return false
}

// SmallestScope is the smallest scope among a's approvals (once <
// session < lifetime), "" when a is empty.
func (a Approvals) SmallestScope() string {
	s := ""
	for _, x := range a {
		if s == "" || ScopeRank(x.Scope) < ScopeRank(s) {
			s = x.Scope
		}
	}
	return s
}

// ApprovalPolicyFor returns the first enforced approval policy, in file
// order, whose match covers capability c; nil when none does.
func (t *Tenant) ApprovalPolicyFor(c Capability) *ApprovalPolicy {
	for i := range t.ApprovalPolicies {
		if t.ApprovalPolicies[i].Shadow {
			continue
		}
		if _, ok := MatchAny(t.ApprovalPolicies[i].Match, c.String()); ok {
			return &t.ApprovalPolicies[i]
		}
	}
	return nil
}

// People returns the members that approver r stands for: the person
// itself, or each member of the group, in file order. An agent, an unknown
// group or person, and anything else stand for nobody.
func (t *Tenant) People(r Ref) []MemberID {
	switch r.Kind {
	case KindPerson:
		if t.Members[MemberID(r.ID)] != nil {
			return []MemberID{MemberID(r.ID)}
		}
	case KindGroup:
		if g := t.Groups[GroupID(r.ID)]; g != nil {
			return g.Members
		}
	}
	return nil
}

// WaitsOn reports whether approver r waits on person p: r is p, or a group
// p is a member of.
func (t *Tenant) WaitsOn(r *Ref, p MemberID) bool {
	if r == nil {
		return false
	}
	for _, m := range t.People(*r) {
		if m == p {
			return true
		}
	}
	return false
}

// Quorum is how many distinct people must allow r: RequiredApprovals, or
// 1 for a record made before groups.
func (r *Request) Quorum() int {
	return max(r.RequiredApprovals, 1)
}

// MayAnswer reports whether r waits on p's answer now: p is r's approver,
// or a person of r's group approver whose allow r does not count yet.
func (t *Tenant) MayAnswer(r *Request, p Ref) bool {
	switch {
	case r.Approver == nil:
		return false
	case *r.Approver == p:
		return true
	}
	return p.Kind == KindPerson && r.Approver.Kind == KindGroup &&
		t.WaitsOn(r.Approver, MemberID(p.ID)) && !r.Approvals.By(p)
}

// Awaiting returns the people a pending r still waits on: those its
// approver stands for, less those whose allow it counts; nil when r is
// not pending or waits on an agent. Notifications go to each of them.
func (t *Tenant) Awaiting(r *Request) []MemberID {
	if r.Status != StatusPending || r.Approver == nil {
		return nil
	}
	var out []MemberID
	for _, m := range t.People(*r.Approver) {
		if !r.Approvals.By(Ref{Kind: KindPerson, ID: string(m)}) {
			out = append(out, m)
		}
	}
	return out
}
