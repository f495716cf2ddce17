package approvals

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/countersign/countersign/domain"
)

// SPEC §5, "Approve with edits": a person (or admin) answering allow may
// send the arguments the call should run with instead. The edit is checked
// as a submit of the same call is, binds the edited call only (a new
// call_digest, scope once, no grant), and is kept on the record as edited.

// edit is an answer's edit, checked against the request it edits.
type edit struct {
	arguments json.RawMessage
	subject   domain.Subject
	stages    []domain.Stage
	digest    string
}

// checkEdit refuses an edit that is not a person's (or admin's) allow
// with scope once, or whose arguments would not pass a submit of r's call
// (the same checks, by validate); otherwise it returns the edit, nil when
// in carries none. Errors: InvalidRequest.
func checkEdit(c Caller, r *domain.Request, in AnswerInput) (*edit, error) {
	if in.Arguments == nil {
		return nil, nil
	}
	switch {
	case in.Decision != DecisionAllow:
		return nil, invalid("arguments", "only an allow may edit the call")
	case c.Principal.Kind != domain.KindPerson && !c.Admin():
		return nil, invalid("arguments", "only a person (or admin) may edit a call; an agent allows or denies it as it is")
	case in.Scope != domain.ScopeOnce:
		return nil, invalid("scope", "an approval with edits binds the edited call once: scope must be %q", domain.ScopeOnce)
	}
	as := SubmitInput{Capability: &r.Capability, Arguments: in.Arguments, Session: r.Session, Turn: r.Turn,
		ToolCallID: r.ToolCallID, Subject: editedSubject(c.Tenant, r), Connection: r.Connection}
	if _, _, err := validate(&as, c.Tenant); err != nil {
		return nil, err
	}
	e := &edit{arguments: bytes.Clone(in.Arguments), subject: *as.Subject}
	if e.subject.Kind == domain.SubjectShell {
		e.stages = stagesOf(e.subject.Command)
	}
	b := r.Binding()
	b.Arguments = e.arguments
	digest, err := domain.CallDigest(b)
	if err != nil {
		return nil, invalid("arguments", "%v", err)
	}
	e.digest = digest
	return e, nil
}

// apply makes r the edited call, every stage of it allowed by by: the
// person's allow covers the whole edited call.
func (e *edit) apply(r *domain.Request, by domain.Ref, now time.Time) {
	r.Edited = &domain.Edited{By: by, At: now, OriginalDigest: r.CallDigest}
	r.Arguments, r.Subject, r.CallDigest = e.arguments, e.subject, e.digest
	if e.stages != nil {
		r.SetStages(e.stages)
		for range e.stages {
			r.AllowStage(by, domain.ScopeOnce, now)
		}
	}
}

// editedSubject is the subject an edit of r is checked with: r's, without
// its command (the edited arguments give a shell call its command), and of
// kind shell when r calls one of the tenant's shell tools, so that the
// edited call is re-derived as a submit of it is (SPEC §8), even for a
// record kept before its tool was one.
func editedSubject(t *domain.Tenant, r *domain.Request) *domain.Subject {
	sub := r.Subject
	sub.Command = ""
	if shellTool(t, r.Capability) {
		sub.Kind = domain.SubjectShell
	}
	return &sub
}
