package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/domain"
)

// Format names a harness's hook protocol.
type Format string

// The formats spoken.
const (
	Claude Format = "claude"
	Codex  Format = "codex"
	Gemini Format = "gemini"
)

// ParseFormat accepts claude (or claude-code), codex and gemini.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "claude", "claude-code":
		return Claude, nil
	case "codex":
		return Codex, nil
	case "gemini":
		return Gemini, nil
	}
	return Claude, fmt.Errorf("unknown hook format %q (want claude, codex or gemini)", s)
}

// event is the hook event each format must be installed on.
func (f Format) event() string {
	if f == Gemini {
		return "BeforeTool"
	}
	return "PreToolUse"
}

// maxInput bounds the hook JSON read from stdin.
const maxInput = 16 << 20

// Input is the part of the harnesses' hook JSON the hook uses.
type Input struct {
	SessionID     string          `json:"session_id"`
	TurnID        string          `json:"turn_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
}

// Verdict is the hook's answer.
type Verdict struct {
	Allow  bool
	Reason string
	// UpdatedInput is the tool input a person's approval with edits runs
	// with instead (SPEC §5); nil: the call as the harness sent it.
	UpdatedInput json.RawMessage

	stop bool // the answer to a Stop event: no objection
}

// Deny is a deny verdict with reason.
func Deny(reason string) Verdict { return Verdict{Reason: reason} }

// Gate is the part of *adapter.Client the hook uses.
type Gate interface {
	Do(ctx context.Context, call adapter.Call, run func(context.Context) error) (adapter.Outcome, error)
	CancelTurn(ctx context.Context, turn string) ([]domain.RequestID, error)
}

var _ Gate = (*adapter.Client)(nil)

// Run reads one hook input from stdin, asks g, and writes the verdict in
// format f to stdout. It never fails: a panic, too, becomes a deny. A
// Stop event (Claude Code, Codex) ends its turn instead (Stop).
func Run(ctx context.Context, g Gate, f Format, stdin io.Reader, stdout io.Writer) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = Deny(fmt.Sprintf("countersign hook failed (%v); the call must not run", p))
		}
		_ = Write(stdout, f, v)
	}()
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput))
	if err != nil {
		return Deny("countersign hook could not read the tool call (" + err.Error() + "); the call must not run")
	}
	if in, ok := stopEvent(f, data); ok {
		return Stop(ctx, g, in)
	}
	return Decide(ctx, g, f, bytes.NewReader(data))
}

// stopEvent reports whether data is a Stop event of format f.
func stopEvent(f Format, data []byte) (Input, bool) {
	var in Input
	if f == Gemini || json.Unmarshal(data, &in) != nil {
		return in, false
	}
	return in, in.HookEventName == "Stop"
}

// Stop answers a harness's Stop event: the turn is over, interrupted or
// not, so every request of the turn still waiting is cancelled (POST
// /v1/turns/{turn}/cancel); nothing of it is decided after the agent
// stopped. It never objects to the stop; a failure is only reported.
func Stop(ctx context.Context, g Gate, in Input) Verdict {
	v := Verdict{Allow: true, stop: true}
	turn := turnOf(in)
	if turn == "" {
		v.Reason = "countersign: the Stop event names no turn; nothing cancelled"
		return v
	}
	ids, err := g.CancelTurn(ctx, turn)
	if err != nil {
		v.Reason = "countersign: cancelling the requests of turn " + turn + " failed: " + err.Error()
		return v
	}
	v.Reason = fmt.Sprintf("countersign: turn %s stopped; %d waiting request(s) cancelled %v", turn, len(ids), ids)
	return v
}

// turnOf is the turn a call or a Stop belongs to: the harness's turn_id,
// or (Claude Code, which sends none) the session: a session has one turn
// running at a time, and its Stop ends what it left waiting.
func turnOf(in Input) string {
	if in.TurnID != "" {
		return in.TurnID
	}
	return in.SessionID
}

// Decide reads one hook input and asks g whether the call may run. Allow
// means the approval was claimed for exactly this call.
func Decide(ctx context.Context, g Gate, f Format, stdin io.Reader) Verdict {
	call, err := read(f, stdin)
	if err != nil {
		return Deny("countersign hook could not read the tool call (" + err.Error() + "); the call must not run")
	}
	var edited json.RawMessage
	if f == Claude { // Claude Code runs a call with updatedInput; the others cannot
		call.TakeEdits = func(a json.RawMessage) { edited = a }
	}
	out, err := g.Do(ctx, call, func(context.Context) error { return nil })
	if err != nil || out.Kind != adapter.Ran {
		return Deny(out.String())
	}
	return Verdict{Allow: true, Reason: out.String(), UpdatedInput: edited}
}

// read parses the hook JSON into the call it describes.
func read(f Format, stdin io.Reader) (adapter.Call, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput))
	if err != nil {
		return adapter.Call{}, err
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return adapter.Call{}, fmt.Errorf("bad hook JSON: %v", err)
	}
	switch {
	case in.HookEventName != "" && in.HookEventName != f.event():
		return adapter.Call{}, fmt.Errorf("event %q: install the hook on %s", in.HookEventName, f.event())
	case strings.TrimSpace(in.ToolName) == "":
		return adapter.Call{}, fmt.Errorf("no tool_name")
	}
	args := bytes.TrimSpace(in.ToolInput)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	return adapter.Call{
		Tool: in.ToolName, Arguments: args, Subject: shellSubject(in.ToolName, args),
		Session: in.SessionID, Turn: turnOf(in), ToolCallID: in.ToolUseID,
	}, nil
}

// Write prints v as format f's hook answer, on one line.
func Write(w io.Writer, f Format, v Verdict) error {
	return json.NewEncoder(w).Encode(answer(f, v))
}

func answer(f Format, v Verdict) any {
	decision := "deny"
	if v.Allow {
		decision = "allow"
	}
	switch {
	case v.stop:
		return struct{}{}
	case f == Gemini:
		return map[string]string{"decision": decision, "reason": v.Reason}
	case f == Codex && v.Allow:
		return struct{}{}
	}
	out := map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       decision,
		"permissionDecisionReason": v.Reason,
	}
	if v.Allow && v.UpdatedInput != nil {
		out["updatedInput"] = v.UpdatedInput
	}
	return map[string]any{"hookSpecificOutput": out}
}
