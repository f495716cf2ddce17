package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/domain"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		f    Format
		v    Verdict
		want string
	}{
		{Claude, Verdict{Allow: true, Reason: "ok"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}`},
		{Claude, Deny("no"), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{Codex, Verdict{Allow: true, Reason: "ok"}, `{}`},
		{Codex, Deny("no"), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{Gemini, Verdict{Allow: true, Reason: "ok"}, `{"decision":"allow","reason":"ok"}`},
		{Gemini, Deny("no"), `{"decision":"deny","reason":"no"}`},
		{Claude, Verdict{Allow: true, Reason: "ok", UpdatedInput: json.RawMessage(`{"amount":1000}`)}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"amount":1000}}}`},
		{Claude, Verdict{Allow: true, Reason: "ok", stop: true}, `{}`},
		{Codex, Verdict{Allow: true, Reason: "ok", stop: true}, `{}`},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Write(&buf, tt.f, tt.v); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(buf.String()); got != tt.want {
			t.Errorf("Write(%s, %+v) = %s, want %s", tt.f, tt.v, got, tt.want)
		}
	}
}

// gate records the call it got and answers with out.
type gate struct {
	got adapter.Call
	out adapter.Outcome
	err error
}

func (g *gate) CancelTurn(context.Context, string) ([]domain.RequestID, error) { return nil, nil }

func (g *gate) Do(_ context.Context, c adapter.Call, run func(context.Context) error) (adapter.Outcome, error) {
	g.got = c
	if g.out.Kind == adapter.Ran {
		_ = run(context.Background())
	}
	return g.out, g.err
}

func TestDecideReadsTheCall(t *testing.T) {
	in := `{"session_id":"s-1","turn_id":"t-1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`
	g := &gate{out: adapter.Outcome{Kind: adapter.Ran}}
	v := Decide(context.Background(), g, Codex, strings.NewReader(in))
	if !v.Allow {
		t.Fatalf("got deny %q, want allow", v.Reason)
	}
	want := adapter.Call{Tool: "Bash", Arguments: json.RawMessage(`{"command":"ls"}`), Session: "s-1", Turn: "t-1", ToolCallID: "toolu_1"}
	if g.got.Tool != want.Tool || string(g.got.Arguments) != string(want.Arguments) ||
		g.got.Session != want.Session || g.got.Turn != want.Turn || g.got.ToolCallID != want.ToolCallID {
		t.Errorf("call %+v, want %+v", g.got, want)
	}
}

func TestDecideDeniesOnAnyProblem(t *testing.T) {
	tests := []struct {
		name, in string
		f        Format
		g        Gate
		want     string
	}{
		{"bad JSON", `{"tool_name":`, Claude, &gate{out: adapter.Outcome{Kind: adapter.Ran}}, "could not read"},
		{"no tool", `{"tool_input":{}}`, Claude, &gate{out: adapter.Outcome{Kind: adapter.Ran}}, "no tool_name"},
		{"wrong event", `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, Claude, &gate{out: adapter.Outcome{Kind: adapter.Ran}}, "PreToolUse"},
		{"gemini event", `{"hook_event_name":"PreToolUse","tool_name":"x"}`, Gemini, &gate{out: adapter.Outcome{Kind: adapter.Ran}}, "BeforeTool"},
		{"invalid call", `{"tool_name":"x","tool_input":[1]}`, Claude, &gate{err: adapter.ErrInvalidCall, out: adapter.Outcome{Kind: adapter.NotObtained, Err: adapter.ErrInvalidCall}}, "could not be obtained"},
		{"unreachable", `{"tool_name":"x"}`, Claude, &gate{out: adapter.Outcome{Kind: adapter.NotObtained, Err: adapter.ErrUnreachable}}, "nobody denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Decide(context.Background(), tt.g, tt.f, strings.NewReader(tt.in))
			if v.Allow || !strings.Contains(v.Reason, tt.want) {
				t.Errorf("got %+v, want a deny mentioning %q", v, tt.want)
			}
		})
	}
}

type panicGate struct{}

func (panicGate) CancelTurn(context.Context, string) ([]domain.RequestID, error) { panic("boom") }

func (panicGate) Do(context.Context, adapter.Call, func(context.Context) error) (adapter.Outcome, error) {
	panic("boom")
}

func TestRunDeniesOnPanic(t *testing.T) {
	var out bytes.Buffer
	v := Run(context.Background(), panicGate{}, Claude, strings.NewReader(`{"tool_name":"x"}`), &out)
	if v.Allow || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Errorf("got %+v, printed %s; want a printed deny", v, out.String())
	}
}

// TestRunDeniesSoonWhenServerDown: with nothing listening, the hook answers
// an explicit deny saying countersign could not be reached, after the
// connect schedule, not after the wait limit.
func TestRunDeniesSoonWhenServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	c, err := adapter.New(url, "dev-main", adapter.WithWaitLimit(540*time.Second),
		adapter.WithConnectRetries(10*time.Millisecond, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	v := Run(ctx, c, Claude, strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`), &out)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the hook took %v, want the connect schedule", took)
	}
	if v.Allow || !strings.Contains(v.Reason, "countersign could not be reached") {
		t.Errorf("verdict %+v, want a deny saying countersign could not be reached", v)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Errorf("stdout %s, want an explicit deny", out.String())
	}
}

// The harnesses' shell tools are sent as shell subjects whose command is
// the one in the arguments; other tools as tools (SPEC §8).
func TestDecideSendsShellToolsAsShell(t *testing.T) {
	for _, tc := range []struct{ tool, input, want string }{
		{"Bash", `{"command":"ls && rm -rf /"}`, "ls && rm -rf /"},
		{"run_shell_command", `{"command":"git status"}`, "git status"},
		{"shell", `{"command":["bash","-lc","npm test"]}`, "npm test"},
		{"shell", `{"command":["git","commit","-m","fix it"]}`, "git commit -m 'fix it'"},
		{"Bash", `{"cmd":"ls"}`, ""},
	} {
		in := `{"hook_event_name":"PreToolUse","tool_name":"` + tc.tool + `","tool_input":` + tc.input + `}`
		g := &gate{out: adapter.Outcome{Kind: adapter.Ran}}
		Decide(context.Background(), g, Claude, strings.NewReader(in))
		if s := g.got.Subject; s == nil || s.Kind != "shell" || s.Command != tc.want {
			t.Errorf("%s %s: subject %+v, want shell %q", tc.tool, tc.input, s, tc.want)
		}
	}
	g := &gate{out: adapter.Outcome{Kind: adapter.Ran}}
	Decide(context.Background(), g, Claude, strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"command":"x"}}`))
	if g.got.Subject != nil {
		t.Errorf("Read: subject %+v, want none (a tool)", g.got.Subject)
	}
}
