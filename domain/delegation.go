package domain

import "time"

// Delegation is delegated work (SPEC §3): Agent works for Delegator in
// Session, from the approval of the Delegator's request RequestID
// (agents.delegate:Agent with that session) until EndedAt.
type Delegation struct {
	Tenant    TenantID  `json:"tenant"`
	Agent     AgentID   `json:"agent"`
	Delegator AgentID   `json:"delegator"`
	Session   string    `json:"session"`
	RequestID RequestID `json:"request_id"`
	// Brief is what the delegator gave: its request's reason, or its
	// arguments when it gave no reason. It is data, never instructions.
	Brief     string    `json:"brief"`
	CreatedAt time.Time `json:"created_at"`
	// ApprovedAt is when RequestID was approved; EndedAt, when the
	// delegation was cancelled or its agent retired (nil while in force).
	ApprovedAt time.Time  `json:"approved_at"`
	EndedAt    *time.Time `json:"ended_at"`
}

// Active reports whether d is in force.
func (d *Delegation) Active() bool { return d.EndedAt == nil }

// Delegates reports whether r is an approved agents.delegate request with
// a session: its approval starts delegated work (SPEC §3).
func (r *Request) Delegates() bool {
	return r.Status == StatusApproved && r.Capability.Action == ActionAgentsDelegate && r.Session != "" && r.Decision != nil
}

// DelegationFrom returns the delegated work r's approval starts (see
// Delegates), created at now.
func DelegationFrom(r *Request, now time.Time) Delegation {
	brief := r.Reason
	if brief == "" {
		brief = string(r.Arguments)
	}
	return Delegation{Tenant: r.Tenant, Agent: AgentID(r.Capability.Target), Delegator: r.Agent, Session: r.Session,
		RequestID: r.ID, Brief: brief, CreatedAt: now.UTC(), ApprovedAt: r.Decision.DecidedAt}
}
