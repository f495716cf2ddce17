package domain

import (
	"slices"
	"time"
)

// Grant effects.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// Grant is a kept decision for one agent and one capability (SPEC §4).
// A grant left by a shell request's stage carries its Match; one
// left by an apps.call request carries its Connection (SPEC §8).
type Grant struct {
	ID         GrantID     `json:"id"`
	Tenant     TenantID    `json:"tenant"`
	Agent      AgentID     `json:"agent"`
	Capability Capability  `json:"capability"`
	Match      *GrantMatch `json:"match,omitempty"`
	Connection *Connection `json:"connection,omitempty"`
	Effect     string      `json:"effect"`
	Scope      string      `json:"scope"`
	Session    string      `json:"session"`
	RequestID  RequestID   `json:"request_id"`
	CreatedBy  Ref         `json:"created_by"`
	CreatedAt  time.Time   `json:"created_at"`
	RevokedAt  *time.Time  `json:"revoked_at"`
}

// GrantMatch narrows a grant within its capability: a shell stage's grant
// carries ShellPrefix, or ShellArgv for an interpreter's stage, and the
// digest of the call's other arguments.
type GrantMatch struct {
	// ShellPrefix is the prefix of the shell stage the grant covers.
	ShellPrefix []string `json:"shell_prefix,omitempty"`
	// ShellArgv, when set, is the exact words of the stage the grant
	// covers: an interpreter's, or one of a command (or with an argument)
	// countersign's command table does not know (SPEC §8); then
	// ShellPrefix is empty.
	ShellArgv []string `json:"shell_argv,omitempty"`
	// ArgumentsDigest is ShellArgumentsDigest of the granted call's
	// arguments: "" when it had none but the command.
	ArgumentsDigest string `json:"arguments_digest,omitempty"`
}

// Covers reports whether g is in force for r (a shell request: for its
// stage at index stage; otherwise stage is ignored). Session grants bind
// only their own session; a grant binds only its own connection revision;
// a shell request is covered only stage by stage, by grants whose
// shell_prefix equals the stage's prefix (an opaque stage never is, but
// for a deny grant), or whose shell_argv equals the stage's exact words
// (Stage.Argv), and only when the
// call's other arguments are the granted call's.
func (g *Grant) Covers(r *Request, stage int) bool {
	if g.RevokedAt != nil || g.Capability != r.Capability || !g.inSession(r.Session) ||
		!sameConnection(g.Connection, r.Connection) {
		return false
	}
	if r.Subject.Kind != SubjectShell {
		return g.Match == nil
	}
	if g.Match == nil || stage < 0 || stage >= len(r.Stages) || !g.Match.coversStage(&r.Stages[stage], g.Effect) {
		return false
	}
	digest, ok := ShellArgumentsDigest(r.Arguments)
	return ok && digest == g.Match.ArgumentsDigest
}

// coversStage: the grant's argv is the stage's exact words, or it has no
// argv and its prefix is the prefix of a stage that is not opaque. A deny
// grant's prefix covers every stage with that prefix, opaque or not:
// denying more is never unsafe.
func (m *GrantMatch) coversStage(st *Stage, effect string) bool {
	if m.ShellArgv != nil {
		return st.Argv != nil && slices.Equal(m.ShellArgv, st.Argv)
	}
	if len(m.ShellPrefix) == 0 || !slices.Equal(m.ShellPrefix, st.Prefix) {
		return false
	}
	return effect == EffectDeny || st.Opaque == "" && st.Argv == nil
}

func (g *Grant) inSession(session string) bool {
	if g.Scope == ScopeSession {
		return session != "" && g.Session == session
	}
	return g.Scope == ScopeLifetime
}

// sameConnection: a grant made without a connection covers only requests
// without one, and one made with a connection only that id and revision.
func sameConnection(a, b *Connection) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
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
