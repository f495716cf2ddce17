package mcpproxy

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// revisionBits is how many bits of the digest a revision keeps: every
// value up to 2^53 is exact as a JSON number and in the call digest.
const revisionBits = 53

// revision is the connection revision of an upstream: the first 53 bits of
// the SHA-256 of the JSON of the connection id, the upstream's
// configuration and its tools as the upstream lists them (names, titles,
// descriptions, schemas, annotations, _meta), sorted by name. encoding/json
// writes object keys sorted and numbers one way, so the same upstream gives
// the same revision in every proxy process, and any change to one tool, or
// a tool added or gone, gives another.
func revision(connection, upstream string, tools []*mcp.Tool) (int64, error) {
	sorted := slices.SortedFunc(slices.Values(tools), func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	raw, err := json.Marshal(struct {
		Connection string      `json:"connection"`
		Upstream   string      `json:"upstream"`
		Tools      []*mcp.Tool `json:"tools"`
	}{connection, upstream, sorted})
	if err != nil {
		return 0, fmt.Errorf("mcpproxy: connection revision: %w", err)
	}
	sum := sha256.Sum256(raw)
	return int64(binary.BigEndian.Uint64(sum[:8]) >> (64 - revisionBits)), nil
}

// describeUpstream is the configuration of a command or streamable HTTP
// upstream transport, as it goes into the connection revision: the
// command line and working directory, or the endpoint URL. Its
// environment is left out. "" for any other transport.
func describeUpstream(t mcp.Transport) string {
	var v any
	switch t := t.(type) {
	case *mcp.CommandTransport:
		if t.Command == nil {
			return ""
		}
		v = map[string]any{"command": t.Command.Args, "dir": t.Command.Dir}
	case *mcp.StreamableClientTransport:
		v = map[string]any{"url": t.Endpoint}
	default:
		return ""
	}
	raw, _ := json.Marshal(v) // strings only: cannot fail
	return string(raw)
}
