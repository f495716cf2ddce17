package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestCommandProcess is not a test. Run as a subprocess of the test binary
// (see subprocess), it runs the command named after "--" — a registered
// subcommand, or the tests' upstream MCP server — and exits with its code.
func TestCommandProcess(t *testing.T) {
	if os.Getenv("COUNTERSIGN_TEST_SUBPROCESS") != "1" {
		t.Skip("runs only as a subprocess of the tests")
	}
	args := argsAfterDashes(os.Args)
	if len(args) > 0 && args[0] == "mcp-upstream" {
		os.Exit(runTestUpstream())
	}
	os.Exit(commands[args[0]].run(args[1:]))
}

// subprocess is `countersign <args>` run from the test binary.
func subprocess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCommandProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "COUNTERSIGN_TEST_SUBPROCESS=1")
	return cmd
}

func argsAfterDashes(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args[i+1:]
		}
	}
	return nil
}

// hookRun is one hook subprocess.
type hookRun struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
}

// startHook starts `countersign hook <args>` with stdin, against url.
func startHook(t *testing.T, url, token, stdin string, args ...string) *hookRun {
	t.Helper()
	h := &hookRun{cmd: subprocess(append([]string{"hook"}, args...)...)}
	h.cmd.Env = append(h.cmd.Env, "COUNTERSIGN_URL="+url, "COUNTERSIGN_TOKEN="+token)
	h.cmd.Stdin = strings.NewReader(stdin)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return h
}

// finish waits for the hook and returns its decoded stdout; the exit code
// must be 0 and stdout one JSON object.
func (h *hookRun) finish(t *testing.T) map[string]any {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hook exited with %v; stderr: %s", err, h.stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = h.cmd.Process.Kill()
		t.Fatal("hook did not finish")
	}
	var out map[string]any
	if err := json.Unmarshal(h.stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", h.stdout.String(), err)
	}
	return out
}

// claudeDecision returns permissionDecision and its reason.
func claudeDecision(t *testing.T, out map[string]any) (string, string) {
	t.Helper()
	hso, _ := out["hookSpecificOutput"].(map[string]any)
	if hso["hookEventName"] != "PreToolUse" {
		t.Fatalf("output %v has no PreToolUse hookSpecificOutput", out)
	}
	d, _ := hso["permissionDecision"].(string)
	r, _ := hso["permissionDecisionReason"].(string)
	return d, r
}

func hookInput(tool string, input string) string {
	return fmt.Sprintf(`{"session_id":"ses-hook","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default",`+
		`"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"toolu_%d","turn_id":"turn-1"}`,
		tool, input, time.Now().UnixNano())
}

func TestHookFailsClosed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more
	tests := []struct {
		name, url, token, stdin string
		args                    []string
		want                    string
	}{
		{"server down", down, "dev-main", hookInput("Bash", `{"command":"ls"}`), []string{"claude-code", "--wait", "3s"}, "could not be obtained"},
		{"server down, default wait", down, "dev-main", hookInput("Bash", `{"command":"ls"}`), []string{"claude-code"}, "countersign could not be reached"},
		{"bad JSON", down, "dev-main", `{"tool_name": `, []string{"claude-code"}, "could not read"},
		{"no token", down, "", hookInput("Bash", `{}`), []string{"claude-code"}, "misconfigured"},
		{"bad flag", down, "dev-main", hookInput("Bash", `{}`), []string{"claude-code", "--wait", "soon"}, "misconfigured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out := startHook(t, tt.url, tt.token, tt.stdin, tt.args...).finish(t)
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("the hook took %v; a refused connection must deny within about 10s", took)
			}
			d, reason := claudeDecision(t, out)
			if d != "deny" || !strings.Contains(reason, tt.want) {
				t.Errorf("got %s %q, want deny mentioning %q", d, reason, tt.want)
			}
		})
	}
}

func TestHookAgainstServer(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	tests := []struct {
		name, tool, format string
		answer             string // "" for none: the read rule decides
		check              func(t *testing.T, out map[string]any)
	}{
		{"read rule allows, claude", "read_file", "claude", "", func(t *testing.T, out map[string]any) {
			d, reason := claudeDecision(t, out)
			if d != "allow" {
				t.Fatalf("got %s %q, want allow", d, reason)
			}
			if rec := a.Get("dev-main", requestID(t, reason)); rec.ClaimedAt == nil || rec.ToolCallID == "" || rec.Session != "ses-hook" {
				t.Errorf("record %+v: want claimed, with the hook's session and tool-use id", rec)
			}
		}},
		{"person denies, claude", "Bash", "claude", "deny", func(t *testing.T, out map[string]any) {
			d, reason := claudeDecision(t, out)
			if d != "deny" || !strings.Contains(reason, `denied by person u-1 with the note "Not on main."`) {
				t.Errorf("got %s %q, want deny by person u-1 with the note", d, reason)
			}
		}},
		{"person approves, claude", "Bash", "claude", "allow", func(t *testing.T, out map[string]any) {
			if d, reason := claudeDecision(t, out); d != "allow" || !strings.Contains(reason, "approved by person u-1") {
				t.Errorf("got %s %q, want allow approved by person u-1", d, reason)
			}
		}},
		{"person approves, codex", "Bash", "codex", "allow", func(t *testing.T, out map[string]any) {
			if len(out) != 0 {
				t.Errorf("got %v, want {} (no objection)", out)
			}
		}},
		{"person denies, codex", "Bash", "codex", "deny", func(t *testing.T, out map[string]any) {
			if d, _ := claudeDecision(t, out); d != "deny" {
				t.Errorf("got %v, want a PreToolUse deny", out)
			}
		}},
		{"person denies, gemini", "run_shell_command", "gemini", "deny", func(t *testing.T, out map[string]any) {
			if out["decision"] != "deny" || !strings.Contains(fmt.Sprint(out["reason"]), "denied by person u-1") {
				t.Errorf("got %v, want decision deny by person u-1", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := hookInput(tt.tool, `{"command":"git push --force"}`)
			if tt.format == "gemini" {
				stdin = strings.Replace(stdin, `"PreToolUse"`, `"BeforeTool"`, 1)
			}
			h := startHook(t, srv.URL, "dev-main", stdin, "claude-code", "--format", tt.format, "--wait", "30s")
			if tt.answer != "" {
				r := a.AwaitPending("dev-person", tt.tool)
				a.Answer("dev-person", r.ID, tt.answer, "Not on main.")
			}
			tt.check(t, h.finish(t))
		})
	}
}

var requestIDPattern = regexp.MustCompile(`req_[0-9A-Z]{26}`)

func requestID(t *testing.T, reason string) domain.RequestID {
	t.Helper()
	id := requestIDPattern.FindString(reason)
	if id == "" {
		t.Fatalf("no request id in %q", reason)
	}
	return domain.RequestID(id)
}
