package rpc

import (
	"encoding/json"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// RequirementID names the requirement a decision targets: the shell stage
// (0 for other kinds) at one revision of the request.
type RequirementID struct {
	SourceIndex int    `json:"sourceIndex"`
	Revision    uint64 `json:"revision"`
}

// SubagentOrigin is present on a registered subagent's approval, which
// shows on the session it shares with its parent.
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
	Text      string      `json:"text"`
	Prefix    []string    `json:"prefix"`
	Opaque    string      `json:"opaque,omitempty"`
	AllowedBy *events.Ref `json:"allowedBy"`
	Scope     string      `json:"scope,omitempty"`
}

func subjectOf(r *events.Request) Subject {
	s := Subject{Kind: r.Subject.Kind, Command: r.Subject.Command}
	for _, st := range r.Stages {
		s.Stages = append(s.Stages, Stage{Text: st.Text, Prefix: st.Prefix, Opaque: st.Opaque, AllowedBy: st.AllowedBy, Scope: st.Scope})
	}
	return s
}

// RequestParams is seed 001's ApprovalRequestParams (every required field
// present), plus eventCursor and a few of the record's fields a client
// shows (capability, reason as quoted data, deadlineAt).
type RequestParams struct {
	ApprovalID           string            `json:"approvalId"`
	AvailableChoices     []Choice          `json:"availableChoices"`
	CurrentRequirementID RequirementID     `json:"currentRequirementId"`
	ItemID               string            `json:"itemId"`
	JudgeEscalated       bool              `json:"judgeEscalated"`
	ProtectedWrite       bool              `json:"protectedWrite"`
	RawArgs              string            `json:"rawArgs"`
	ReviewerReason       string            `json:"reviewerReason,omitempty"`
	SessionID            string            `json:"sessionId"`
	SourceRange          string            `json:"sourceRange"`
	SubagentOrigin       *SubagentOrigin   `json:"subagentOrigin,omitempty"`
	Subject              Subject           `json:"subject"`
	TaskID               string            `json:"taskId"`
	ToolCallID           string            `json:"toolCallId"`
	ToolName             string            `json:"toolName"`
	TurnID               string            `json:"turnId"`
	ViewCursor           string            `json:"viewCursor"`
	EventCursor          string            `json:"eventCursor"`
	Capability           events.Capability `json:"capability"`
	Reason               string            `json:"reason"`
	DeadlineAt           time.Time         `json:"deadlineAt"`

	// RequiredApprovals and Approvals are the quorum and the people's
	// allows it counts so far (SPEC §12).
	RequiredApprovals int              `json:"requiredApprovals"`
	Approvals         events.Approvals `json:"approvals"`
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
	By         events.Ref `json:"by"`
	Note       string     `json:"note,omitempty"`
	Scope      string     `json:"scope,omitempty"`
	DecidedAt  time.Time  `json:"decidedAt"`
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	QuotedRule string     `json:"quotedRule,omitempty"`
}

// requestParams builds the params of approval/requested or updated for
// caller c: judgeEscalated is given (see subscription.open), the choices
// are c's own.
func requestParams(svc *approvals.Service, c approvals.Caller, r *events.Request, judgeEscalated bool, cursor string) RequestParams {
	p := RequestParams{
		ApprovalID:           string(r.ID),
		AvailableChoices:     choices(svc, c, r),
		CurrentRequirementID: RequirementID{SourceIndex: currentStage(r), Revision: r.Revision},
		ItemID:               string(r.ID),
		JudgeEscalated:       judgeEscalated,
		ProtectedWrite:       protectedWrite(r),
		RawArgs:              string(r.Arguments),
		SessionID:            r.Session,
		SourceRange:          cursor,
		SubagentOrigin:       subagentOrigin(svc, r),
		Subject:              subjectOf(r),
		TaskID:               string(r.Agent),
		ToolCallID:           r.ToolCallID,
		ToolName:             r.Tool,
		TurnID:               r.Turn,
		ViewCursor:           events.MsgID(r.ID, 0),
		EventCursor:          cursor,
		Capability:           r.Capability,
		Reason:               r.Reason,
		DeadlineAt:           r.DeadlineAt,
		RequiredApprovals:    r.Quorum(),
		Approvals:            r.Approvals,
	}
	if r.ReviewerReason != nil {
		p.ReviewerReason = *r.ReviewerReason
	}
	if p.ToolName == "" {
		p.ToolName = r.Capability.Target
	}
	return p
}

// subagentOrigin names a registered subagent and its parent; nil for an
// agent that is its session's owner.
func subagentOrigin(svc *approvals.Service, r *events.Request) *SubagentOrigin {
	a, ok := svc.Views().Agent(r.Tenant, r.Agent)
	if !ok || !a.Registered || a.Parent == "" {
		return nil
	}
	return &SubagentOrigin{AgentID: string(a.ID), ParentAgentID: string(a.Parent)}
}

// resolvedParams builds approval/resolved for a terminal r.
func resolvedParams(r *events.Request, cursor string) ResolvedParams {
	p := ResolvedParams{ApprovalID: string(r.ID), Status: string(r.Status), EventCursor: cursor}
	if d := r.Decision; d != nil {
		p.Decision = Decision{Status: string(d.Status), By: d.By, Note: d.Note, Scope: d.Scope,
			DecidedAt: d.DecidedAt, ExpiresAt: d.ExpiresAt, QuotedRule: d.QuotedRule}
	}
	return p
}

// currentStage is the index of the shell stage still needing a decision
// (0 for other subject kinds).
func currentStage(r *events.Request) int { return r.CurrentStage }

// protectedWrite reports whether r guards a write to a protected file.
func protectedWrite(r *events.Request) bool { return r.Subject.ProtectedWrite }

// recordOf decodes the record an event carries (structured mode);
// false for grant events and anything else.
func recordOf(ev approvals.Event) (*events.Request, bool) {
	var ce struct {
		Data events.Request `json:"data"`
	}
	if ev.Type == events.TypeGrantCreated || ev.Type == events.TypeGrantRevoked || json.Unmarshal(ev.JSON, &ce) != nil {
		return nil, false
	}
	return &ce.Data, ce.Data.ID != ""
}
