package mcpproxy

import (
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The revision depends on the tools and the configuration, not on the
// order the upstream lists the tools in, and fits a JSON number exactly.
func TestRevision(t *testing.T) {
	obj := map[string]any{"type": "object"}
	a := &mcp.Tool{Name: "a", InputSchema: obj}
	b := &mcp.Tool{Name: "b", InputSchema: obj}
	rev := func(conn, up string, tools ...*mcp.Tool) int64 {
		t.Helper()
		r, err := revision(conn, up, tools)
		if err != nil {
			t.Fatal(err)
		}
		if r < 0 || r >= 1<<53 {
			t.Errorf("revision %d is not in [0, 2^53)", r)
		}
		return r
	}
	base := rev("mail", "cmd", a, b)
	if rev("mail", "cmd", b, a) != base {
		t.Error("the revision depends on the listing order")
	}
	for name, other := range map[string]int64{
		"connection id": rev("mail2", "cmd", a, b),
		"upstream":      rev("mail", "cmd2", a, b),
		"tool gone":     rev("mail", "cmd", a),
		"description":   rev("mail", "cmd", a, &mcp.Tool{Name: "b", Description: "B.", InputSchema: obj}),
		"annotations":   rev("mail", "cmd", a, &mcp.Tool{Name: "b", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}),
	} {
		if other == base {
			t.Errorf("another %s gives the same revision", name)
		}
	}
}

func TestDescribeUpstream(t *testing.T) {
	cmd := exec.Command("mail-server", "--inbox", "a")
	cmd.Dir = "/srv"
	for _, tc := range []struct {
		tr   mcp.Transport
		want string
	}{
		{&mcp.CommandTransport{Command: cmd}, `{"command":["mail-server","--inbox","a"],"dir":"/srv"}`},
		{&mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1:9000/mcp"}, `{"url":"http://127.0.0.1:9000/mcp"}`},
		{&mcp.CommandTransport{}, ""},
		{&mcp.InMemoryTransport{}, ""},
	} {
		if got := describeUpstream(tc.tr); got != tc.want {
			t.Errorf("describeUpstream(%T) = %s, want %s", tc.tr, got, tc.want)
		}
	}
}
