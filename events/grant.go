package events

import "time"

// Grant effects.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// Grant is a kept decision for one agent and one capability (SPEC §4).
type Grant struct {
	ID         GrantID    `json:"id"`
	Tenant     TenantID   `json:"tenant"`
	Agent      AgentID    `json:"agent"`
	Capability Capability `json:"capability"`
	Effect     string     `json:"effect"`
	Scope      string     `json:"scope"`
	Session    string     `json:"session"`
	RequestID  RequestID  `json:"request_id"`
	CreatedBy  Ref        `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// Applies reports whether g is in force for capability c in session.
// Session grants bind only their own session.
func (g *Grant) Applies(c Capability, session string) bool {
	if g.RevokedAt != nil || g.Capability != c {
		return false
	}
	if g.Scope == ScopeSession {
		return session != "" && g.Session == session
	}
	return g.Scope == ScopeLifetime
}

// Rule is a plain-language sentence kept for an agent (SPEC §6).
type Rule struct {
	ID        RuleID    `json:"id"`
	Tenant    TenantID  `json:"tenant"`
	Agent     AgentID   `json:"agent"`
	Text      string    `json:"text"`
	Effect    string    `json:"effect,omitempty"`
	CreatedBy Ref       `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}
