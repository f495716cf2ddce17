package rpc

import (
	"encoding/json"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// RequirementID names the requirement a decision targets: the shell stage
// (0 for other kinds) at one revision of the request.
type RequirementID struct {
	SourceIndex int    `json:"sourceIndex"`
	Revision    uint64 `json:"revision"`
}

// SubagentOrigin is present only on a subagent's approval projected onto
// its parent's session (see viewOf).
type SubagentOrigin struct {
	AgentID       string `json:"agentId"`
	ParentAgentID string `json:"parentAgentId"`
}

// Subject is what the approval is for (the record's subject, camelCase),
// with a shell request's stages.
type Subject struct {
	Kind    string  `json:"kind"`
	Command string  `json:"command,omitempty"`
	Stages  []Stage `json:"stages,omitempty"`
}

// Stage is one stage of a shell request; allowedBy is null while it waits.
type Stage struct {
	Text      string     `json:"text"`
	Prefix    []string   `json:"prefix"`
	Opaque    string     `json:"opaque,omitempty"`
	Grant     string     `json:"grant,omitempty"` // which grant a session or lifetime allow leaves (approvals.GrantText)
	AllowedBy *Principal `json:"allowedBy"`
	Scope     string     `json:"scope,omitempty"`
	AllowedAt *time.Time `json:"allowedAt"`
}

// Principal is who a record names (the record's {kind, id}), and for a
// person their name (SPEC §10 "People by name": the config's, else their
// ID token's), absent when they have none. The name is the person's
// text as given: a client shows it escaped, as it shows reason.
type Principal struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

func principal(svc *approvals.Service, t domain.TenantID, p domain.Ref) Principal {
	out := Principal{Kind: p.Kind, ID: p.ID}
	if p.Kind == domain.KindPerson {
		out.Name = svc.PersonName(t, domain.MemberID(p.ID))
	}
	return out
}

// Approval is one person's allow of a group's request (SPEC §12), the
// person by name.
type Approval struct {
	By    Principal `json:"by"`
	At    time.Time `json:"at"`
	Scope string    `json:"scope"`
	Note  string    `json:"note"`
}

// approvalsOf is r's approvals, always an array.
func approvalsOf(svc *approvals.Service, r *domain.Request) []Approval {
	out := make([]Approval, len(r.Approvals))
	for i, a := range r.Approvals {
		out[i] = Approval{By: principal(svc, r.Tenant, a.By), At: a.At, Scope: a.Scope, Note: a.Note}
	}
	return out
}

// SourceRange is the protocol's sourceRange (SPEC §8): the stored changes the params
// were folded from, the request's first (From) to the one shown (To),
// each a change id; opaque to clients.
type SourceRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// CuaCardFacts are a computer_use approval's facts, in the host's words:
// taken from the call's arguments "page" (or "url"), "window" and
// "steps" (or "action", one step).
type CuaCardFacts struct {
	Page   string   `json:"page"`
	Window string   `json:"window"`
	Steps  []string `json:"steps"`
}

// subjectComputerUse is the subject kind that carries cuaCardFacts.
const subjectComputerUse = "computer_use"

// cuaCardFacts reads r's facts; nil for any other subject kind.
func cuaCardFacts(r *domain.Request) *CuaCardFacts {
	if r.Subject.Kind != subjectComputerUse {
		return nil
	}
	var a struct {
		Page, URL, Window, Action string
		Steps                     []string
	}
	_ = json.Unmarshal(r.Arguments, &a) // facts the arguments lack stay empty
	f := &CuaCardFacts{Page: a.Page, Window: a.Window, Steps: a.Steps}
	if f.Page == "" {
		f.Page = a.URL
	}
	if f.Steps == nil && a.Action != "" {
		f.Steps = []string{a.Action}
	}
	if f.Steps == nil {
		f.Steps = []string{}
	}
	return f
}

func subjectOf(svc *approvals.Service, r *domain.Request) Subject {
	s := Subject{Kind: r.Subject.Kind, Command: r.Subject.Command}
	for _, st := range r.Stages {
		var by *Principal
		if st.AllowedBy != nil {
			p := principal(svc, r.Tenant, *st.AllowedBy)
			by = &p
		}
		s.Stages = append(s.Stages, Stage{Text: st.Text, Prefix: st.Prefix, Opaque: st.Opaque, Grant: st.Grant, AllowedBy: by, Scope: st.Scope, AllowedAt: st.AllowedAt})
	}
	return s
}

// RequestParams is the protocol's ApprovalRequestParams (every required field
// present), plus eventCursor and a few of the record's fields a client
// shows (capability, reason as quoted data, deadlineAt).
type RequestParams struct {
	ApprovalID           string             `json:"approvalId"`
	AvailableChoices     []approvals.Choice `json:"availableChoices"`
	CurrentRequirementID RequirementID      `json:"currentRequirementId"`
	CuaCardFacts         *CuaCardFacts      `json:"cuaCardFacts,omitempty"`
	ItemID               string             `json:"itemId"`
	JudgeEscalated       bool               `json:"judgeEscalated"`
	ProtectedWrite       bool               `json:"protectedWrite"`
	RawArgs              string             `json:"rawArgs"`
	ReviewerReason       string             `json:"reviewerReason,omitempty"`
	SessionID            string             `json:"sessionId"`
	SourceRange          SourceRange        `json:"sourceRange"`
	SubagentOrigin       *SubagentOrigin    `json:"subagentOrigin,omitempty"`
	Subject              Subject            `json:"subject"`
	TaskID               string             `json:"taskId"`
	ToolCallID           string             `json:"toolCallId"`
	ToolName             string             `json:"toolName"`
	TurnID               string             `json:"turnId"`
	ViewCursor           string             `json:"viewCursor"`
	EventCursor          string             `json:"eventCursor"`
	Capability           domain.Capability  `json:"capability"`
	Reason               string             `json:"reason"`
	DeadlineAt           time.Time          `json:"deadlineAt"`

	// Approver is who the request waits on (person, group or agent; a
	// person by name).
	Approver *Principal `json:"approver,omitempty"`

	// RequiredApprovals and Approvals are the quorum and the people's
	// allows it counts so far (SPEC §12).
	RequiredApprovals int        `json:"requiredApprovals"`
	Approvals         []Approval `json:"approvals"`
}

// ResolvedParams is approval/resolved: the request is terminal.
type ResolvedParams struct {
	ApprovalID  string   `json:"approvalId"`
	Status      string   `json:"status"`
	Decision    Decision `json:"decision"`
	EventCursor string   `json:"eventCursor"`
}

// Decision is the record's decision, camelCase.
type Decision struct {
	Status     string     `json:"status"`
	By         Principal  `json:"by"`
	Note       string     `json:"note,omitempty"`
	Scope      string     `json:"scope,omitempty"`
	DecidedAt  time.Time  `json:"decidedAt"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	QuotedRule string     `json:"quotedRule,omitempty"`
}

// requestParams builds the params of approval/requested or updated for
// caller c: judgeEscalated is given (see subscription.open), the choices
// are c's own.
func requestParams(svc *approvals.Service, c approvals.Caller, r *domain.Request, judgeEscalated bool, cursor string) RequestParams {
	v := viewOf(svc, r)
	p := RequestParams{
		ApprovalID:           string(r.ID),
		AvailableChoices:     svc.Choices(c, r),
		CurrentRequirementID: RequirementID{SourceIndex: currentStage(r), Revision: r.Revision},
		CuaCardFacts:         cuaCardFacts(r),
		ItemID:               itemID(r),
		JudgeEscalated:       judgeEscalated,
		ProtectedWrite:       protectedWrite(r),
		RawArgs:              string(r.Arguments),
		SessionID:            v.session,
		SourceRange:          SourceRange{From: events.MsgID(r.ID, 0), To: events.MsgID(r.ID, r.Revision)},
		SubagentOrigin:       v.origin,
		Subject:              subjectOf(svc, r),
		TaskID:               taskID(r),
		ToolCallID:           r.ToolCallID,
		ToolName:             r.Tool,
		TurnID:               r.Turn,
		ViewCursor:           events.MsgID(r.ID, 0),
		EventCursor:          cursor,
		Capability:           r.Capability,
		Reason:               r.Reason,
		DeadlineAt:           r.DeadlineAt,
		RequiredApprovals:    r.Quorum(),
		Approvals:            approvalsOf(svc, r),
	}
	if r.Approver != nil {
		a := principal(svc, r.Tenant, *r.Approver)
		p.Approver = &a
	}
	if r.ReviewerReason != nil {
		p.ReviewerReason = *r.ReviewerReason
	}
	if p.ToolName == "" {
		p.ToolName = r.Capability.Target
	}
	return p
}

// view is where an approval is shown: its session, and the subagent it
// comes from when it is projected onto its parent's session.
type view struct {
	session string
	origin  *SubagentOrigin
}

// viewOf places r. A registered subagent spawned by a request in a
// session (its parent's: domain.Agent.Session) has its approvals
// projected onto that session, with subagentOrigin, whatever session
// its own request names; every other approval is shown on its own
// session, without subagentOrigin.
func viewOf(svc *approvals.Service, r *domain.Request) view {
	a, ok := svc.Views().Agent(r.Tenant, r.Agent)
	if !ok || !a.Registered || a.Parent == "" || a.Session == "" {
		return view{session: r.Session}
	}
	return view{session: a.Session, origin: &SubagentOrigin{AgentID: string(a.ID), ParentAgentID: string(a.Parent)}}
}

// itemID is the toolCall view item: the adapter's tool_call_id, else the
// request id.
func itemID(r *domain.Request) string {
	if r.ToolCallID != "" {
		return r.ToolCallID
	}
	return string(r.ID)
}

// taskID is the task running the call: the turn (one turn is one task of
// the agent), else the agent's current work, its session, else the agent.
func taskID(r *domain.Request) string {
	switch {
	case r.Turn != "":
		return r.Turn
	case r.Session != "":
		return r.Session
	}
	return string(r.Agent)
}

// resolvedParams builds approval/resolved for a terminal r.
func resolvedParams(svc *approvals.Service, r *domain.Request, cursor string) ResolvedParams {
	p := ResolvedParams{ApprovalID: string(r.ID), Status: string(r.Status), EventCursor: cursor}
	if d := r.Decision; d != nil {
		p.Decision = Decision{Status: string(d.Status), By: principal(svc, r.Tenant, d.By), Note: d.Note, Scope: d.Scope,
			DecidedAt: d.DecidedAt, ExpiresAt: d.ExpiresAt, QuotedRule: d.QuotedRule}
	}
	return p
}

// currentStage is the index of the shell stage still needing a decision
// (0 for other subject kinds).
func currentStage(r *domain.Request) int { return r.CurrentStage }

// protectedWrite reports whether r guards a write to a protected file.
func protectedWrite(r *domain.Request) bool { return r.Subject.ProtectedWrite }

// recordOf decodes the record an event carries (structured mode);
// false for grant events and anything else.
func recordOf(ev approvals.Event) (*domain.Request, bool) {
	var ce struct {
		Data domain.Request `json:"data"`
	}
	if ev.Type == events.TypeGrantCreated || ev.Type == events.TypeGrantRevoked || json.Unmarshal(ev.JSON, &ce) != nil {
		return nil, false
	}
	return &ce.Data, ce.Data.ID != ""
}
