package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Token scopes (SPEC §5).
const (
	ScopeRequestsWrite  = "requests:write"
	ScopeApprovalsRead  = "approvals:read"
	ScopeApprovalsWrite = "approvals:write"
	ScopeAdmin          = "admin"
	// ScopeEventsRead lets a service: principal subscribe to the tenant's
	// raw events on the bus (SPEC §9).
	ScopeEventsRead = "events:read"
)

// Tenant is an organization and everything configured in it.
type Tenant struct {
	ID             TenantID
	RequestTimeout time.Duration // default 24h
	ApprovalTTL    time.Duration // default 5m
	IdempotencyTTL time.Duration // default 24h
	// RequestRetention is how long a terminal record is kept after it
	// ends (default 720h); 0 keeps it.
	RequestRetention time.Duration
	ReadRules        []string
	ShadowReadRules  []string // mode: shadow (SPEC §16): evaluated, never deciding
	Members          map[MemberID]*Member
	Agents           map[AgentID]*Agent
	Tokens           []Token
	Judge            *JudgeConfig
	// Groups answer together at the top of a chain, as ApprovalPolicies
	// say (SPEC §12): the first policy matching a capability, in file
	// order, applies.
	Groups           map[GroupID]*Group
	ApprovalPolicies []ApprovalPolicy
	// Quotas (SPEC §5): each agent's own pending requests at most, and
	// each token's submits a second, in bursts of SubmitBurst. Zero takes
	// the default.
	MaxPending  int // default DefaultMaxPending
	SubmitRate  int // default DefaultSubmitRate
	SubmitBurst int // default DefaultSubmitBurst
	// AuditRetention is how long an audit log entry is kept (SPEC §14).
	AuditRetention time.Duration
	// ShellTools name the tools whose arguments.command is a shell
	// command line (SPEC §8, the tenant's shell_tools): nil is the
	// default, domain.ShellTools; an empty, non-nil list names none.
	ShellTools []string
}

// ShellTool reports whether tool is one of t's shell tools: a call of it
// is a shell request whatever subject it declares (SPEC §8).
func (t *Tenant) ShellTool(tool string) bool {
	if t.ShellTools == nil {
		return slices.Contains(ShellTools, tool)
	}
	return slices.Contains(t.ShellTools, tool)
}

// Defaults of a tenant's quotas (SPEC §5 "Quotas").
const (
	DefaultMaxPending  = 1000
	DefaultSubmitRate  = 50
	DefaultSubmitBurst = 100
)

// Policy is what a member, and agents working for them, may ever do.
type Policy struct {
	Allow []string `json:"allow" yaml:"allow"`
	Deny  []string `json:"deny" yaml:"deny"`
}

// Permits reports whether the policy allows capability string c, and the
// pattern that decided (the deny pattern when denied).
func (p *Policy) Permits(c string) bool {
	if p == nil {
		return false
	}
	if _, ok := MatchAny(p.Deny, c); ok {
		return false
	}
	_, ok := MatchAny(p.Allow, c)
	return ok
}

// Member is a person in a tenant.
type Member struct {
	ID     MemberID
	Policy *Policy // nil: may do nothing
	// Backup answers for the member once a request has waited on them
	// AnswerWithin without an answer (SPEC §12); "" and 0 when none.
	Backup       MemberID
	AnswerWithin time.Duration
	// Email is what sign-in matches (SPEC §13) and where email goes
	// (SPEC §10); "" when none.
	Email string
	// Name is how people see the member (SPEC §10 "People by name"),
	// shown with the id beside it; "" when the config gives none.
	Name string
}

// Agent is a lasting (configured) or registered agent.
type Agent struct {
	ID            AgentID       `json:"id"`
	Tenant        TenantID      `json:"tenant"`
	Member        MemberID      `json:"member"`
	Parent        AgentID       `json:"parent,omitempty"`
	Role          string        `json:"role,omitempty"`
	Brief         string        `json:"brief,omitempty"`
	Memory        string        `json:"memory,omitempty"`
	Rules         []string      `json:"-"`
	ReviewTimeout time.Duration `json:"review_timeout,omitempty"` // default 2m
	Reviewer      string        `json:"reviewer,omitempty"`       // none | model
	Registered    bool          `json:"registered,omitempty"`     // a subagent registered via POST /v1/agents
	TokenSHA256   string        `json:"token_sha256,omitempty"`   // registered subagents only
	// Session is the session of the spawn request that registered this
	// subagent, its parent's: the subagent's approvals are projected onto
	// it (SPEC §8). "" when it was registered without a request.
	Session string `json:"session,omitempty"`
	// Scopes of a registered subagent's token: those of the agent scopes
	// (requests:write, approvals:read, approvals:write) that the token
	// which registered it held. A record without them (registered before
	// they were kept) gets requests:write only.
	Scopes    []string   `json:"scopes,omitempty"`
	CreatedAt time.Time  `json:"created_at,omitzero"`
	RetiredAt *time.Time `json:"retired_at,omitempty"` // set by DELETE /v1/agents/{id}; a retired agent never authenticates
}

// Token maps a bearer token to a principal and scopes.
type Token struct {
	SHA256    string // lowercase hex of the token's UTF-8 bytes
	Principal Ref
	Scopes    []string
	// Policy, if set, narrows what calls submitted with this token may do:
	// a call must pass both it and the member's policy (SPEC §2 step 1).
	Policy *Policy
}

// Has reports whether the token carries scope s (admin carries all).
func (t *Token) Has(s string) bool {
	for _, x := range t.Scopes {
		if x == s || x == ScopeAdmin {
			return true
		}
	}
	return false
}

// JudgeConfig points the rules judge at an OpenAI-compatible endpoint.
type JudgeConfig struct {
	BaseURL   string
	Model     string
	APIKeyEnv string
	Timeout   time.Duration
}

// HashToken returns the lowercase hex SHA-256 of a token.
func HashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// ParsePrincipal parses "person:<id>", "agent:<id>" or "service:<name>".
func ParsePrincipal(s string) (Ref, bool) {
	for _, k := range []string{KindPerson, KindAgent, KindService} {
		if len(s) > len(k)+1 && s[:len(k)+1] == k+":" {
			return Ref{Kind: k, ID: s[len(k)+1:]}, true
		}
	}
	return Ref{}, false
}

// AgentScopes are the scopes a registered subagent's token may carry.
var AgentScopes = []string{ScopeRequestsWrite, ScopeApprovalsRead, ScopeApprovalsWrite}

// SubagentScopes are the agent scopes that parent holds: a subagent gets
// nothing its parent does not hold (SPEC §5), and never admin.
func SubagentScopes(parent Token) []string {
	var out []string
	for _, s := range AgentScopes {
		if parent.Has(s) {
			out = append(out, s)
		}
	}
	return out
}

// TokenScopes are the scopes of a registered subagent's token.
func (a *Agent) TokenScopes() []string {
	if a.Scopes == nil {
		return []string{ScopeRequestsWrite}
	}
	return a.Scopes
}

// agentJSON is Agent's JSON form but for review_timeout, which is a Go
// duration string ("2m0s") in every answer and every stored record.
type agentJSON Agent

// MarshalJSON writes review_timeout as a Go duration string, as every
// duration in the API is.
func (a Agent) MarshalJSON() ([]byte, error) {
	var rt string
	if a.ReviewTimeout != 0 {
		rt = a.ReviewTimeout.String()
	}
	return json.Marshal(struct {
		agentJSON
		ReviewTimeout string `json:"review_timeout,omitempty"`
	}{agentJSON(a), rt})
}

// UnmarshalJSON reads review_timeout as a Go duration string, or as the
// integer nanoseconds that records stored by older versions hold.
func (a *Agent) UnmarshalJSON(b []byte) error {
	var v struct {
		*agentJSON
		ReviewTimeout json.RawMessage `json:"review_timeout,omitempty"`
	}
	v.agentJSON = (*agentJSON)(a)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d, err := durationJSON(v.ReviewTimeout)
	if err != nil {
		return fmt.Errorf("agent review_timeout: %w", err)
	}
	a.ReviewTimeout = d
	return nil
}

// durationJSON reads a JSON duration: absent or null as 0, a string as a
// Go duration, a number as nanoseconds.
func durationJSON(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return time.ParseDuration(s)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("%s is neither a duration string nor nanoseconds", raw)
	}
	return time.Duration(n), nil
}
