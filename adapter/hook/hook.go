package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/countersign/countersign/adapter"
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
}

// Deny is a deny verdict with reason.
func Deny(reason string) Verdict { return Verdict{Reason: reason} }

// Gate is the part of *adapter.Client the hook uses.
type Gate interface {
	Do(ctx context.Context, call adapter.Call, run func(context.Context) error) (adapter.Outcome, error)
}

var _ Gate = (*adapter.Client)(nil)

// Run reads one hook input from stdin, asks g, and writes the verdict in
// format f to stdout. It never fails: a panic, too, becomes a deny.
func Run(ctx context.Context, g Gate, f Format, stdin io.Reader, stdout io.Writer) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = Deny(fmt.Sprintf("countersign hook failed (%v); the call must not run", p))
		}
		_ = Write(stdout, f, v)
	}()
	return Decide(ctx, g, f, stdin)
}

// Decide reads one hook input and asks g whether the call may run. Allow
// means the approval was claimed for exactly this call.
func Decide(ctx context.Context, g Gate, f Format, stdin io.Reader) Verdict {
	call, err := read(f, stdin)
	if err != nil {
		return Deny("countersign hook could not read the tool call (" + err.Error() + "); the call must not run")
	}
	out, err := g.Do(ctx, call, func(context.Context) error { return nil })
	if err != nil || out.Kind != adapter.Ran {
		return Deny(out.String())
	}
	return Verdict{Allow: true, Reason: out.String()}
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
		Session: in.SessionID, Turn: in.TurnID, ToolCallID: in.ToolUseID,
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
	case f == Gemini:
		return map[string]string{"decision": decision, "reason": v.Reason}
	case f == Codex && v.Allow:
		return struct{}{}
	}
	return map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       decision,
		"permissionDecisionReason": v.Reason,
	}}
}
