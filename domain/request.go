package domain

import (
	"encoding/json"
	"slices"
	"time"
)

// Capability actions known in v1 (SPEC §1).
const (
	ActionToolsCall      = "tools.call"
	ActionAppsCall       = "apps.call"
	ActionAgentsDelegate = "agents.delegate"
	ActionAgentsSpawn    = "agents.spawn"
)

// KnownAction reports whether a is one of the v1 capability actions.
func KnownAction(a string) bool {
	switch a {
	case ActionToolsCall, ActionAppsCall, ActionAgentsDelegate, ActionAgentsSpawn:
		return true
	}
	return false
}

// Capability is an {action, target} pair, written action:target in patterns.
type Capability struct {
	Action string `json:"action"`
	Target string `json:"target"`
}

// String returns the action:target form that patterns match.
func (c Capability) String() string { return c.Action + ":" + c.Target }

// Status is a request's lifecycle state (SPEC §4).
type Status string

const (
	StatusPending   Status = "pending"
	StatusApproved  Status = "approved"
	StatusDenied    Status = "denied"
	StatusExpired   Status = "expired"
	StatusCancelled Status = "cancelled"
)

// Terminal reports whether no further decision can change s.
func (s Status) Terminal() bool { return s != StatusPending }

// ValidStatus reports whether s names a lifecycle state.
func ValidStatus(s string) bool {
	switch Status(s) {
	case StatusPending, StatusApproved, StatusDenied, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// Decider kinds and the kinds of "by" on a decision.
const (
	KindPerson      = "person"
	KindAgent       = "agent"
	KindPolicy      = "policy"
	KindRead        = "read"
	KindOwnSubagent = "own_subagent"
	KindGrant       = "grant"
	KindRule        = "rule"
	KindDeadline    = "deadline"
	KindService     = "service"
)

// Subject kinds known in v1 (SPEC §2).
const (
	SubjectTool  = "tool"
	SubjectShell = "shell"
)

// Ref names who or what: {kind, id}.
type Ref struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// Subject says what an approval is for; Kind "tool" is the default.
// ProtectedWrite marks a write to a protected file: answers to it may only
// use scope once (SPEC §8).
type Subject struct {
	Kind           string `json:"kind"`
	Command        string `json:"command,omitempty"`
	ProtectedWrite bool   `json:"protected_write,omitempty"`
}

// Stage is one simple command of a shell request (SPEC §8), decided in
// order: the request's CurrentStage is the first stage not yet allowed.
type Stage struct {
	Text   string   `json:"text"`
	Prefix []string `json:"prefix"`
	// Opaque says why no shell_prefix grant or read rule ever covers the
	// stage; "" when one may.
	Opaque string `json:"opaque,omitempty"`
	// Argv is the words of a stage that only a grant of exactly these
	// words (shell_argv) covers: an interpreter's, or one countersign's
	// command table does not read (SPEC §8); nil on any other stage.
	Argv []string `json:"argv,omitempty"`
	// Grant says which grant a session or lifetime allow of the stage
	// leaves, as the surfaces show it: "any `git push …`", "exactly this
	// command", or that none does (approvals.GrantText).
	Grant string `json:"grant,omitempty"`
	// AllowedBy is who allowed the stage (a grant, a person, an agent);
	// nil while it waits. Scope and AllowedAt go with it.
	AllowedBy *Ref       `json:"allowed_by"`
	Scope     string     `json:"scope,omitempty"`
	AllowedAt *time.Time `json:"allowed_at,omitempty"`
}

// Connection binds an apps.call to one revision of an App connection.
type Connection struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// Endorsement is an agent's allow of a request it did not hold.
type Endorsement struct {
	Agent AgentID   `json:"agent"`
	Note  string    `json:"note"`
	At    time.Time `json:"at"`
}

// Endorsements lists a request's endorsements. It encodes as [] when empty,
// never null (SPEC §4: the record's endorsements is always an array), so no
// transition that copies or clears it can change the wire shape.
type Endorsements []Endorsement

// MarshalJSON encodes e, nil as [].
func (e Endorsements) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Endorsement(e))
}

// Scopes of an answer and of a grant.
const (
	ScopeOnce     = "once"
	ScopeSession  = "session"
	ScopeLifetime = "lifetime"
)

// ScopeRank orders scopes: once < session < lifetime; 0 for unknown.
func ScopeRank(s string) int {
	switch s {
	case ScopeOnce:
		return 1
	case ScopeSession:
		return 2
	case ScopeLifetime:
		return 3
	}
	return 0
}

// Decision is a terminal request's outcome (SPEC §4).
type Decision struct {
	Status     Status     `json:"status"`
	By         Ref        `json:"by"`
	Note       string     `json:"note,omitempty"`
	Scope      string     `json:"scope,omitempty"`
	DecidedAt  time.Time  `json:"decided_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	QuotedRule string     `json:"quoted_rule,omitempty"`
}

// Request is the record of one intercepted call (SPEC §4, "The record").
// Arguments are kept exactly as received.
type Request struct {
	ID             RequestID       `json:"id"`
	Tenant         TenantID        `json:"tenant"`
	Agent          AgentID         `json:"agent"`
	Session        string          `json:"session"`
	Turn           string          `json:"turn"`
	ToolCallID     string          `json:"tool_call_id"`
	Capability     Capability      `json:"capability"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	Subject        Subject         `json:"subject"`
	Stages         []Stage         `json:"stages,omitempty"`
	CurrentStage   int             `json:"current_stage"`
	Connection     *Connection     `json:"connection"`
	Reason         string          `json:"reason"`
	CallDigest     string          `json:"call_digest"`
	Timeout        string          `json:"timeout"`
	Status         Status          `json:"status"`
	Approver       *Ref            `json:"approver"`
	Chain          []AgentID       `json:"chain"`
	Endorsements   Endorsements    `json:"endorsements"`
	Abstentions    []Endorsement   `json:"abstentions,omitempty"`
	JudgeEscalated bool            `json:"judge_escalated"`
	ReviewerReason *string         `json:"reviewer_reason"`
	Revision       uint64          `json:"revision"`
	CreatedAt      time.Time       `json:"created_at"`
	DeadlineAt     time.Time       `json:"deadline_at"`
	ClaimedAt      *time.Time      `json:"claimed_at"`
	Decision       *Decision       `json:"decision"`

	// RequiredApprovals is how many distinct people must allow (SPEC
	// §12); a record without it (made before groups) needs 1.
	RequiredApprovals int `json:"required_approvals"`
	// Approvals are the people's allows counted so far; always an array.
	Approvals Approvals `json:"approvals"`
	// Escalation is the request's latest move to a backup (SPEC §12);
	// nil until it first moves.
	Escalation *Escalation `json:"escalation,omitempty"`
	// Shadow is what the rules in shadow mode would have done at the
	// request's creation (SPEC §16); absent when none matched.
	Shadow []Shadow `json:"shadow,omitempty"`
	// Edited is set when a person approved the call with edits (SPEC §5,
	// "Approve with edits"): Arguments and CallDigest are then the edited
	// call's; nil otherwise.
	Edited *Edited `json:"edited,omitempty"`
}

// Edited records an approval with edits: who edited the call, when, and
// the call_digest of the call as the agent submitted it.
type Edited struct {
	By             Ref       `json:"by"`
	At             time.Time `json:"at"`
	OriginalDigest string    `json:"original_digest"`
}

// Escalation is what moved a request to its current approver's backup
// (SPEC §12): By is {kind: deadline} (the person's answer_within ran
// out), At when, and Passed every person it has moved away from, in
// order (the last is the one it left), so that it never moves back to one.
type Escalation struct {
	By     Ref        `json:"by"`
	At     time.Time  `json:"at"`
	Passed []MemberID `json:"passed"`
}

// Clone returns a copy of r that shares nothing a change may write: its
// slices and the values its pointers point to are copied. A change made to
// the clone leaves r, and every reader holding r (a mirror's copy), alone.
// Arguments, Stage.Prefix and the stage texts are only ever read, and stay
// shared.
func (r *Request) Clone() Request {
	c := *r
	c.Stages = slices.Clone(r.Stages)
	for i := range c.Stages {
		c.Stages[i].AllowedBy = clonePtr(c.Stages[i].AllowedBy)
		c.Stages[i].AllowedAt = clonePtr(c.Stages[i].AllowedAt)
	}
	c.Chain = slices.Clone(r.Chain)
	c.Endorsements = slices.Clone(r.Endorsements)
	c.Abstentions = slices.Clone(r.Abstentions)
	c.Approvals = slices.Clone(r.Approvals)
	c.Connection = clonePtr(r.Connection)
	c.Approver = clonePtr(r.Approver)
	c.ReviewerReason = clonePtr(r.ReviewerReason)
	c.ClaimedAt = clonePtr(r.ClaimedAt)
	c.Edited = clonePtr(r.Edited)
	if r.Decision != nil {
		d := *r.Decision
		d.ExpiresAt = clonePtr(d.ExpiresAt)
		c.Decision = &d
	}
	if r.Escalation != nil {
		e := *r.Escalation
		e.Passed = slices.Clone(e.Passed)
		c.Escalation = &e
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Binding returns the exact-call binding of r, for CallDigest.
func (r *Request) Binding() CallBinding {
	return CallBinding{
		Tenant: string(r.Tenant), Agent: string(r.Agent), Session: r.Session,
		Turn: r.Turn, ToolCallID: r.ToolCallID, Capability: r.Capability,
		Arguments: r.Arguments, Connection: r.Connection,
	}
}

// AllowStage marks r's current stage allowed by by and moves CurrentStage
// to the next stage still waiting. It reports whether every stage is now
// allowed (a request without stages has nothing left at once).
func (r *Request) AllowStage(by Ref, scope string, at time.Time) bool {
	return r.AllowStageAt(r.CurrentStage, by, scope, at)
}

// AllowStageAt marks stage i allowed (a grant covering it at submit) and
// reports whether every stage is now allowed.
func (r *Request) AllowStageAt(i int, by Ref, scope string, at time.Time) bool {
	if i >= 0 && i < len(r.Stages) {
		st := &r.Stages[i]
		st.AllowedBy, st.Scope, st.AllowedAt = &by, scope, &at
	}
	r.CurrentStage = firstWaiting(r.Stages)
	return r.CurrentStage >= len(r.Stages)
}

// firstWaiting returns the index of the first stage not allowed, or
// len(stages).
func firstWaiting(stages []Stage) int {
	for i := range stages {
		if stages[i].AllowedBy == nil {
			return i
		}
	}
	return len(stages)
}

// SetStages gives r its stages, all waiting.
func (r *Request) SetStages(stages []Stage) {
	r.Stages, r.CurrentStage = stages, 0
}

// RemoveAt returns when a terminal r is removed, retention after it ended
// (SPEC §9); false while r is pending or when retention is 0 (kept).
func (r *Request) RemoveAt(retention time.Duration) (time.Time, bool) {
	if !r.Status.Terminal() || r.Decision == nil || retention <= 0 {
		return time.Time{}, false
	}
	return r.Decision.DecidedAt.Add(retention), true
}

// Answered reports whether principal p answered (decided, endorsed or
// abstained on) r.
func (r *Request) Answered(p Ref) bool {
	if r.Decision != nil && r.Decision.By == p {
		return true
	}
	if p.Kind != KindAgent {
		return r.Approvals.By(p)
	}
	for _, e := range append(append([]Endorsement(nil), r.Endorsements...), r.Abstentions...) {
		if string(e.Agent) == p.ID {
			return true
		}
	}
	return false
}

// Submission is the body of POST /v1/requests: an intercepted call as the
// agent-side adapter submits it. Exactly one of Tool (shorthand for
// tools.call:<tool>) and Capability is set.
type Submission struct {
	Tool       string          `json:"tool,omitempty"`
	Capability *Capability     `json:"capability,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	Timeout    string          `json:"timeout,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Session    string          `json:"session,omitempty"`
	Turn       string          `json:"turn,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Subject    *Subject        `json:"subject,omitempty"`
	Connection *Connection     `json:"connection,omitempty"`
}
