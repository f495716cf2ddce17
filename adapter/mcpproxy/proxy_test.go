package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/adapter/mcpproxy"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is a real MCP server that records the arguments its tools get.
type upstream struct {
	server *mcp.Server
	mu     sync.Mutex
	calls  map[string][]string // tool -> raw arguments received
}

func newUpstream() *upstream {
	u := &upstream{calls: map[string][]string{}}
	u.server = mcp.NewServer(&mcp.Implementation{Name: "mail", Version: "v1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}}
	u.add(&mcp.Tool{Name: "send_email", Description: "Send an email.", InputSchema: schema}, "sent")
	u.add(&mcp.Tool{Name: "read_inbox", InputSchema: map[string]any{"type": "object"}}, "3 messages")
	u.add(&mcp.Tool{Name: "issue_refund", InputSchema: map[string]any{"type": "object"}}, "refunded")
	u.add(&mcp.Tool{Name: "lookup_contact", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Look up a contact"}}, "found")
	u.server.AddResource(&mcp.Resource{URI: "memo://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "hello"}}}, nil
		})
	u.server.AddPrompt(&mcp.Prompt{Name: "summarize"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize the inbox."}}}}, nil
		})
	return u
}

func (u *upstream) add(t *mcp.Tool, answer string) {
	u.server.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls[t.Name] = append(u.calls[t.Name], string(req.Params.Arguments))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer}}}, nil
	})
}

func (u *upstream) got(tool string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls[tool]...)
}

// connect puts a proxy gated by a countersign adapter (token) between a
// new upstream and a real MCP client.
func connect(t *testing.T, srvURL, token string, opts ...adapter.Option) (*mcp.ClientSession, *upstream) {
	t.Helper()
	ctx := context.Background()
	up := newUpstream()
	ut, pt := mcp.NewInMemoryTransports()
	if _, err := up.server.Connect(ctx, ut, nil); err != nil {
		t.Fatal(err)
	}
	gate, err := adapter.New(srvURL, token, append([]adapter.Option{adapter.WithBackoff(20*time.Millisecond, 200*time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mcpproxy.Connect(ctx, pt, mcpproxy.Config{Gate: gate, Session: "ses-mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	dt, st := mcp.NewInMemoryTransports()
	if _, err := p.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, dt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, up
}

func TestProxyReexportsToolsWithReasonArgument(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs, _ := connect(t, srv.URL, servertest.TokenMain)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{"send_email", "read_inbox", "lookup_contact"} {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tool %s not re-exported; got %v", name, res.Tools)
		}
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		if _, ok := props[mcpproxy.ReasonArg]; !ok {
			t.Errorf("%s: schema %v lacks %s", name, tool.InputSchema, mcpproxy.ReasonArg)
		}
	}
	if _, ok := tools["send_email"].InputSchema.(map[string]any)["properties"].(map[string]any)["to"]; !ok {
		t.Errorf("send_email lost its own arguments: %v", tools["send_email"].InputSchema)
	}
	if a := tools["lookup_contact"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("lookup_contact annotations %+v, want readOnlyHint passed through", a)
	}
}

// callAsync calls a tool through the proxy in a goroutine.
func callAsync(cs *mcp.ClientSession, tool string, args any) <-chan *mcp.CallToolResult {
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
		}
		ch <- res
	}()
	return ch
}

func text(t *testing.T, ch <-chan *mcp.CallToolResult) (string, bool) {
	t.Helper()
	select {
	case res := <-ch:
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	case <-time.After(30 * time.Second):
		t.Fatal("tool call did not return")
	}
	return "", false
}

func TestProxyGatesEveryCall(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	cs, up := connect(t, srv.URL, servertest.TokenMain)
	email := map[string]any{"to": "a@example.com", "body": "Your refund <is> on its way.", mcpproxy.ReasonArg: "The customer asked for a confirmation."}
	tests := []struct {
		name, tool string
		args       map[string]any
		answer     string // "" when the server decides alone
		want       string
		wantErr    bool
		wantRuns   int
	}{
		{"read rule", "read_inbox", map[string]any{}, "", "3 messages", false, 1},
		{"approved", "send_email", email, "allow", "sent", false, 1},
		{"denied", "send_email", email, "deny", `denied by person u-1 with the note "Not to customers."`, true, 1},
		{"readOnlyHint is no read", "lookup_contact", map[string]any{"to": "a"}, "deny", "denied by person u-1", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := callAsync(cs, tt.tool, tt.args)
			if tt.answer != "" {
				r := a.AwaitPending(servertest.TokenPerson, tt.tool)
				if r.Session != "ses-mcp" || (tt.args[mcpproxy.ReasonArg] != nil && r.Reason != tt.args[mcpproxy.ReasonArg]) {
					t.Errorf("request session %q reason %q; want the proxy's session and the %s", r.Session, r.Reason, mcpproxy.ReasonArg)
				}
				if bytes.Contains(r.Arguments, []byte(mcpproxy.ReasonArg)) {
					t.Errorf("request arguments %s carry %s", r.Arguments, mcpproxy.ReasonArg)
				}
				a.Answer(servertest.TokenPerson, r.ID, tt.answer, "Not to customers.")
			}
			got, isErr := text(t, ch)
			if !strings.Contains(got, tt.want) || isErr != tt.wantErr {
				t.Errorf("got %q (isError %v), want %q (isError %v)", got, isErr, tt.want, tt.wantErr)
			}
			if n := len(up.got(tt.tool)); n != tt.wantRuns {
				t.Errorf("upstream ran %s %d times, want %d", tt.tool, n, tt.wantRuns)
			}
		})
	}
	for _, raw := range up.got("send_email") {
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil || args[mcpproxy.ReasonArg] != nil || args["body"] != email["body"] {
			t.Errorf("upstream got %s; want the approved arguments without %s", raw, mcpproxy.ReasonArg)
		}
	}
}

func TestProxyExpiryIsAToolErrorNotADenial(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs, up := connect(t, srv.URL, servertest.TokenMain, adapter.WithWaitLimit(4*time.Second), adapter.WithMargin(4*time.Second))
	got, isErr := text(t, callAsync(cs, "send_email", map[string]any{"to": "b@example.com"}))
	if !isErr || !strings.Contains(got, "no decision was made in time") || strings.Contains(got, "denied by") {
		t.Errorf("got %q (isError %v), want a tool error saying no decision was made in time", got, isErr)
	}
	if n := len(up.got("send_email")); n != 0 {
		t.Errorf("upstream ran %d times, want 0", n)
	}
}

func TestProxyPassesResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs, _ := connect(t, srv.URL, servertest.TokenMain)
	ctx := context.Background()
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://greeting"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
		t.Errorf("ReadResource = %+v, %v; want hello", rr, err)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize"})
	if err != nil || len(pr.Messages) != 1 {
		t.Fatalf("GetPrompt = %+v, %v; want one message", pr, err)
	}
	if tc, _ := pr.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "Summarize the inbox." {
		t.Errorf("prompt message %+v, want the upstream's", pr.Messages[0].Content)
	}
}

// The downstream lists follow the upstream's: a resource, a resource
// template and a prompt added upstream appear, and those removed go.
func TestProxyMirrorsTheUpstreamsReadLists(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs, up := connect(t, srv.URL, servertest.TokenMain)
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	up.server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "memo", URITemplate: "memo://{name}"}, read)
	testutil.Eventually(t, 10*time.Second, func() bool { return lists(t, cs) == "memo://greeting | memo://{name} | summarize" },
		"the template added upstream served")
	up.server.RemoveResources("memo://greeting")
	up.server.AddResource(&mcp.Resource{URI: "memo://farewell", Name: "farewell"}, read)
	up.server.RemoveResourceTemplates("memo://{name}")
	up.server.RemovePrompts("summarize")
	up.server.AddPrompt(&mcp.Prompt{Name: "triage"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	testutil.Eventually(t, 10*time.Second, func() bool { return lists(t, cs) == "memo://farewell |  | triage" },
		"the removed ones gone downstream, the added ones served")
}

// lists is what cs is served: resources | templates | prompts.
func lists(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	ctx := context.Background()
	var res, tpl, pr []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			return err.Error()
		}
		res = append(res, r.URI)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return err.Error()
		}
		tpl = append(tpl, r.URITemplate)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return err.Error()
		}
		pr = append(pr, p.Name)
	}
	return strings.Join(res, ",") + " | " + strings.Join(tpl, ",") + " | " + strings.Join(pr, ",")
}

// TestProxyForwardsTheArgumentsAsReceived: the upstream gets the arguments
// the agent sent, key order and number spelling kept, only
// countersign_reason removed; the request is bound to the same bytes.
func TestProxyForwardsTheArgumentsAsReceived(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	cs, up := connect(t, srv.URL, servertest.TokenMain)
	sent := json.RawMessage(`{"to":"a@example.com","z":{"b":1,"a":[1.50,2e3]},"countersign_reason":"Asked for it.","body":"hi"}`)
	const want = `{"to":"a@example.com","z":{"b":1,"a":[1.50,2e3]},"body":"hi"}`
	ch := callAsync(cs, "send_email", sent)
	r := a.AwaitPending(servertest.TokenPerson, "send_email")
	if string(r.Arguments) != want || r.Reason != "Asked for it." {
		t.Errorf("request arguments %s reason %q, want %s and the reason", r.Arguments, r.Reason, want)
	}
	a.Answer(servertest.TokenPerson, r.ID, "allow", "")
	if got, isErr := text(t, ch); isErr {
		t.Fatalf("call failed: %s", got)
	}
	if got := up.got("send_email"); len(got) != 1 || got[0] != want {
		t.Errorf("upstream got %q, want exactly %s", got, want)
	}
}
