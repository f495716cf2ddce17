package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter/mcpproxy"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runTestUpstream is a small MCP server on stdio: the upstream the proxy
// command is tested against.
func runTestUpstream() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	for name, answer := range map[string]string{"read_notes": "no notes yet", "delete_notes": "all notes deleted"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer}}}, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

func TestMCPProxyCommand(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	upstream := []string{"--", subprocess().Path, "-test.run=^TestCommandProcess$", "--", "mcp-upstream"}
	proxyArgs := []string{"mcp-proxy", "--url", srv.URL, "--token", "dev-main", "--wait", "30s"}
	tests := []struct {
		name    string
		connect func(t *testing.T) mcp.Transport
	}{
		{"stdio", func(t *testing.T) mcp.Transport {
			return &mcp.CommandTransport{Command: subprocess(append(proxyArgs, upstream...)...)}
		}},
		{"streamable HTTP", func(t *testing.T) mcp.Transport {
			addr := freeAddr(t)
			cmd := subprocess(append(append(proxyArgs, "--listen", addr), upstream...)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
			awaitListening(t, addr)
			return &mcp.StreamableClientTransport{Endpoint: "http://" + addr}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, tt.connect(t), nil)
			if err != nil {
				t.Fatalf("connect to the proxy: %v", err)
			}
			defer cs.Close()
			checkProxiedTools(t, ctx, cs, srv.API(t))
		})
	}
}

// With --connection, calls go as apps.call:<id>/<tool> bound to the
// connection's revision, and a restarted proxy of the same upstream
// command binds them to the same revision.
func TestMCPProxyConnection(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	args := []string{"mcp-proxy", "--url", srv.URL, "--token", "dev-main", "--wait", "30s", "--connection", "notes",
		"--", subprocess().Path, "-test.run=^TestCommandProcess$", "--", "mcp-upstream"}
	var seen []domain.Connection
	for range 2 { // the second proxy process is the first one restarted
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: subprocess(args...)}, nil)
		if err != nil {
			t.Fatalf("connect to the proxy: %v", err)
		}
		done := make(chan string, 1)
		go func() { done <- callText(ctx, cs, "delete_notes", nil) }()
		r := a.AwaitPending("dev-person", "notes/delete_notes")
		if r.Capability.Action != domain.ActionAppsCall || r.Connection == nil || r.Connection.ID != "notes" || r.Connection.Revision == 0 {
			t.Fatalf("request %+v connection %+v, want apps.call:notes/delete_notes bound to a revision of notes", r.Capability, r.Connection)
		}
		seen = append(seen, *r.Connection)
		a.Answer("dev-person", r.ID, "deny", "")
		<-done
		cs.Close()
	}
	if seen[0] != seen[1] {
		t.Errorf("connection %+v after a restart, want %+v", seen[1], seen[0])
	}
	out, err := subprocess("mcp-proxy", "--url", srv.URL, "--token", "dev-main", "--connection", "no/slash", "--", "true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "connection id must match") {
		t.Errorf("--connection no/slash: %v %s; want it refused", err, out)
	}
}

// checkProxiedTools: a read runs at once; a denied call comes back as a
// tool error with the denial's wording.
func checkProxiedTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession, a servertest.API) {
	t.Helper()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 || !strings.Contains(jsonText(lt.Tools[0].InputSchema), mcpproxy.ReasonArg) {
		t.Fatalf("tools %v, %v; want 2 tools with %s", lt, err, mcpproxy.ReasonArg)
	}
	if got := callText(ctx, cs, "read_notes", nil); got != "no notes yet" {
		t.Errorf("read_notes = %q, want the upstream's answer", got)
	}
	done := make(chan string, 1)
	go func() {
		done <- callText(ctx, cs, "delete_notes", map[string]any{mcpproxy.ReasonArg: "Clean slate."})
	}()
	r := a.AwaitPending("dev-person", "delete_notes")
	if r.Reason != "Clean slate." {
		t.Errorf("request reason %q, want the countersign_reason", r.Reason)
	}
	a.Answer("dev-person", r.ID, "deny", "Keep them.")
	if got := <-done; !strings.Contains(got, `error: countersign: denied by person u-1 with the note "Keep them."`) {
		t.Errorf("delete_notes = %q, want a tool error with the denial", got)
	}
}

// callText calls tool and returns its text, prefixed "error: " for a tool
// error.
func callText(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) string {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "protocol error: " + err.Error()
	}
	var b strings.Builder
	if res.IsError {
		b.WriteString("error: ")
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func awaitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("the proxy never listened on %s", addr)
}
