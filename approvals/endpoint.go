package approvals

import (
	"context"
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// Input is one operation's input as a surface hands it over. A surface
// maps its own wire onto it and nothing more: HTTP gives the path's
// values in Path, a GET's query in Query and the body; the bus gives only
// the body, whose fields then carry what HTTP's path does ("id", "turn").
type Input struct {
	// Path holds what the surface's address names beside the body: "id"
	// (a request, grant or agent), "turn", "rule_id", "session". A name
	// given here may not be given in the body too.
	Path map[string]string
	// Query returns a read's parameters when the surface gives them
	// beside the body (HTTP's ?query): they take the place of the body's
	// fields. Called once, after Permit. nil: the body gives them.
	Query func() (map[string]string, error)
	// Body returns the operation's JSON body, which the endpoint decodes
	// strictly (Decode). It is called once, after Permit, so a caller who
	// may not run the operation is refused before the body is read. nil:
	// no body.
	Body func() ([]byte, error)
	// Header reads a header of the call: traceparent, Idempotency-Key.
	// nil: none.
	Header func(name string) string
	// Hold is told a long-poll's wait before it starts (HTTP moves its
	// write deadline past it). nil: nothing.
	Hold func(wait time.Duration)
}

// Result is an operation's answer: its status (200, 201, or 204 with no
// body) and either a request's record (Record, IsRecord set: a surface
// may write it as it was stored) or another body (Body). The record is
// held by value, so that a surface's result stays on its stack.
type Result struct {
	Status   int
	IsRecord bool
	Record   kvstate.Record
	Body     any
}

// Value is the result's body as one value: the request of Record, or
// Body.
func (r *Result) Value() any {
	if r.IsRecord {
		return &r.Record.Request
	}
	return r.Body
}

// Endpoint runs one operation for an authenticated caller: Permit (the
// scope and principal kind of policies), then the strict decode of the
// operation's body, then its use case, then the result's shape. Every
// surface binds to it; none has a rule of its own. Errors: ErrForbidden,
// an InvalidRequest refusal, and those of the operation's use case.
type Endpoint func(ctx context.Context, c Caller, in Input) (Result, error)

// run is an operation's work once Permit has passed.
type run func(s *Service, ctx context.Context, c Caller, in Input) (Result, error)

// Endpoint returns op's endpoint; an Op without one (a stream, such as
// OpEvents or OpWatch, whose surface serves it after Admit) is refused
// 403 on every call.
func (s *Service) Endpoint(op Op) Endpoint {
	r := runs[op]
	return func(ctx context.Context, c Caller, in Input) (Result, error) {
		if err := Permit(c, op); err != nil {
			return Result{}, err
		}
		if r == nil {
			return Result{}, errNoPolicy
		}
		return r(s, ctx, c, in)
	}
}

// runs is the one table of what each operation does, beside policies'
// table of who may.
var runs = map[Op]run{
	OpSubmit:        runSubmit,
	OpGet:           runGet,
	OpList:          runList,
	OpAnswer:        runAnswer,
	OpCancel:        runCancel,
	OpClaim:         runClaim,
	OpGrants:        runGrants,
	OpRevoke:        runRevoke,
	OpRegisterAgent: runRegisterAgent,
	OpRetireAgent:   runRetireAgent,
	OpRules:         runRules,
	OpAddRule:       runAddRule,
	OpDeleteRule:    runDeleteRule,
	OpEndDelegation: runEndDelegation,
}

// body reads in's body into v strictly (Decode), or leaves v as it is
// when optional and the body is absent. It returns the body's digest.
func (in Input) body(v any, optional bool) (string, error) {
	var raw []byte
	if in.Body != nil {
		var err error
		if raw, err = in.Body(); err != nil {
			return "", err
		}
	}
	if optional {
		return "", wire.DecodeOptional(raw, v)
	}
	return wire.Decode(raw, v)
}

// header is in's header name, "" when it has none.
func (in Input) header(name string) string {
	if in.Header == nil {
		return ""
	}
	return in.Header(name)
}

// target is a name HTTP gives in the path and the bus in the body: from
// the path when it is there (and then not in the body too), else from
// the body, where it is required.
func (in Input) target(name, fromBody string) (string, error) {
	v, inPath := in.Path[name]
	switch {
	case inPath && fromBody != "":
		return "", problem.Invalid(name, "unknown field "+name)
	case inPath:
		return v, nil
	case fromBody == "":
		return "", problem.Invalid(name, name+" is required")
	}
	return fromBody, nil
}

// ok is a 200 with a record.
func ok(rec kvstate.Record, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Status: http.StatusOK, IsRecord: true, Record: rec}, nil
}

// okBody is a 200 (or status) with v.
func okBody(status int, v any, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Status: status, Body: v}, nil
}

// target is the "id" a bus body adds to its HTTP twin's.
type target struct {
	ID string `json:"id,omitempty"`
}

func runSubmit(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body SubmitInput
	digest, err := in.body(&body, false)
	if err != nil {
		return Result{}, err
	}
	ctx = WithTraceparent(ctx, in.header("traceparent"))
	rec, created, err := s.Submit(ctx, c, body, in.header("Idempotency-Key"), digest)
	if err != nil {
		return Result{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return Result{Status: status, IsRecord: true, Record: rec}, nil
}

// getInput is get's body: the request and an optional wait (HTTP's
// ?wait=).
type getInput struct {
	target
	Wait string `json:"wait,omitempty"`
}

func (g *getInput) query() map[string]string { return map[string]string{"wait": g.Wait} }

func runGet(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body getInput
	q, err := in.params(&body)
	if err != nil {
		return Result{}, err
	}
	id, err := in.target("id", body.ID)
	if err != nil {
		return Result{}, err
	}
	wait, err := wire.ParseWait(q["wait"])
	if err != nil {
		return Result{}, err
	}
	if wait <= 0 {
		return ok(s.Get(ctx, c, domain.RequestID(id)))
	}
	if in.Hold != nil {
		in.Hold(wait)
	}
	rec, err := s.Wait(ctx, c, domain.RequestID(id), wait)
	if err != nil {
		return Result{}, err
	}
	return ok(*rec, nil)
}

func runAnswer(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body struct {
		target
		AnswerInput
	}
	if _, err := in.body(&body, false); err != nil {
		return Result{}, err
	}
	id, err := in.target("id", body.ID)
	if err != nil {
		return Result{}, err
	}
	return ok(s.Answer(ctx, c, domain.RequestID(id), body.AnswerInput))
}

// cancelInput is cancel's body: one request's id, or a turn whose
// pending requests all end (POST /v1/turns/{turn}/cancel).
type cancelInput struct {
	ID   string `json:"id,omitempty"`
	Turn string `json:"turn,omitempty"`
}

func runCancel(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body cancelInput
	if _, err := in.body(&body, true); err != nil {
		return Result{}, err
	}
	_, byTurn := in.Path["turn"]
	if byTurn || body.Turn != "" {
		return cancelTurn(s, ctx, c, in, body)
	}
	if _, inPath := in.Path["id"]; !inPath && body.ID == "" {
		return Result{}, problem.Invalid("id", "id or turn is required")
	}
	id, err := in.target("id", body.ID)
	if err != nil {
		return Result{}, err
	}
	return ok(s.Cancel(ctx, c, domain.RequestID(id)))
}

// cancelTurn is cancel by turn, which names no request.
func cancelTurn(s *Service, ctx context.Context, c Caller, in Input, body cancelInput) (Result, error) {
	if body.ID != "" || in.Path["id"] != "" {
		return Result{}, problem.Invalid("turn", "give id or turn, not both")
	}
	turn, err := in.target("turn", body.Turn)
	if err != nil {
		return Result{}, err
	}
	ids, err := s.CancelTurn(ctx, c, turn)
	return okBody(http.StatusOK, TurnCancelled{Cancelled: ids}, err)
}

func runClaim(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body struct {
		target
		CallDigest string `json:"call_digest"`
	}
	if _, err := in.body(&body, false); err != nil {
		return Result{}, err
	}
	id, err := in.target("id", body.ID)
	if err != nil {
		return Result{}, err
	}
	return ok(s.Claim(ctx, c, domain.RequestID(id), body.CallDigest))
}

func runRevoke(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body target
	if _, err := in.body(&body, true); err != nil {
		return Result{}, err
	}
	id, err := in.target("id", body.ID)
	if err != nil {
		return Result{}, err
	}
	g, err := s.RevokeGrant(ctx, c, domain.GrantID(id))
	return okBody(http.StatusOK, g, err)
}
