package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reasonSchema describes ReasonArg in every re-exported tool.
var reasonSchema = map[string]any{
	"type": "string",
	"description": "Why this call is needed, in one or two plain sentences. " +
		"It is shown to whoever approves the call; it is not passed to the tool.",
}

// syncTools mirrors the upstream's tools. The connection revision of the
// new list is in force before any of its tools is served, so a call to a
// changed tool never goes out under the old revision.
func (p *Proxy) syncTools(ctx context.Context) error {
	var listed, out []*mcp.Tool
	for t, err := range p.upstream.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpproxy: list tools: %w", err)
		}
		tool, err := reexport(t)
		if err != nil {
			p.cfg.Logger.Warn("mcpproxy: tool not re-exported", "tool", t.Name, "err", err)
			continue
		}
		listed, out = append(listed, t), append(out, tool)
	}
	if p.cfg.Connection != "" {
		rev, err := revision(p.cfg.Connection, p.cfg.Upstream, listed)
		if err != nil {
			return err
		}
		if old := p.rev.Swap(rev); old != rev {
			p.cfg.Logger.Info("mcpproxy: connection revision", "connection", p.cfg.Connection, "revision", rev)
		}
	}
	var names []string
	for i, t := range listed {
		if p.guard("tool", t.Name, func() { p.server.AddTool(out[i], p.handler(t.Name, isShellTool(t))) }) {
			names = append(names, t.Name)
		}
	}
	p.server.RemoveTools(gone(p.tools, names)...)
	p.tools = names
	return nil
}

// reexport copies t with ReasonArg added to its input schema. Annotations
// are copied as they are: they are for display only.
func reexport(t *mcp.Tool) (*mcp.Tool, error) {
	var schema map[string]any
	raw, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(raw, &schema)
	}
	if err != nil || schema == nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	if typ, ok := schema["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("input schema type %v, want object", typ)
	}
	schema["type"] = "object"
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[ReasonArg] = reasonSchema
	schema["properties"] = props
	out := *t
	out.InputSchema = schema
	return &out, nil
}

// handler gates one tool's calls through countersign; a shell tool's as
// shell subjects.
func (p *Proxy) handler(name string, shell bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, reason, err := stripReason(req.Params.Arguments)
		if err != nil {
			return errorResult("countersign proxy: " + err.Error() + "; the call did not run"), nil
		}
		call := adapter.Call{Tool: name, Arguments: args, Reason: reason, Session: p.session(req)}
		if id := p.cfg.Connection; id != "" {
			call.Tool = ""
			call.Capability = domain.Capability{Action: domain.ActionAppsCall, Target: id + "/" + name}
			call.Connection = &domain.Connection{ID: id, Revision: p.rev.Load()}
		}
		if shell {
			call.Subject = domain.ShellSubject(args)
		}
		// A person's approval with edits runs with the edited arguments
		// (SPEC §5): the adapter hands them over after their claim.
		call.TakeEdits = func(edited json.RawMessage) { args = edited }
		var res *mcp.CallToolResult
		out, err := p.cfg.Gate.Do(ctx, call, func(ctx context.Context) error {
			var err error
			res, err = p.upstream.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			return err
		})
		switch {
		case out.Kind != adapter.Ran:
			return errorResult(out.String()), nil
		case err != nil:
			return errorResult(fmt.Sprintf("countersign: the call was approved and its approval spent (request %s), "+
				"but the upstream server failed: %v", out.RequestID(), err)), nil
		}
		return res, nil
	}
}

// session is the countersign session for a call.
func (p *Proxy) session(req *mcp.CallToolRequest) string {
	if !p.fixedSess && req.Session != nil && req.Session.ID() != "" {
		return req.Session.ID()
	}
	return p.cfg.Session
}

// stripReason removes ReasonArg from the arguments object and returns it.
// Everything else is kept byte for byte (key order, spacing, number
// spelling): the upstream runs with, and countersign binds the approval
// to, exactly what the agent sent, minus that one member.
func stripReason(raw json.RawMessage) (json.RawMessage, string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}"), "", nil
	}
	from, to, value, err := findMember(raw, ReasonArg)
	if err != nil || value == nil {
		return raw, "", err
	}
	var reason string
	if err := json.Unmarshal(value, &reason); err != nil {
		return nil, "", fmt.Errorf("%s must be a string", ReasonArg)
	}
	out := make([]byte, 0, len(raw)-(to-from))
	out = append(append(out, raw[:from]...), raw[to:]...)
	return out, reason, nil
}

// errNotObject: the arguments are not one JSON object.
var errNotObject = errors.New("arguments must be a JSON object")

// findMember finds the top-level member key of the object raw and returns
// the byte span to cut to remove it with its comma, and its value; a nil
// value when raw has no such member. Anything but one object is an error.
func findMember(raw []byte, key string) (from, to int, value json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, nil, errNotObject
	}
	prevEnd, first := int(dec.InputOffset()), true
	for dec.More() {
		k, err := dec.Token()
		var v json.RawMessage
		if err == nil {
			err = dec.Decode(&v)
		}
		if err != nil {
			return 0, 0, nil, errNotObject
		}
		end := int(dec.InputOffset())
		if k == key {
			if value != nil {
				return 0, 0, nil, fmt.Errorf("%s appears twice", key)
			}
			from, to, value = prevEnd, end, v
			if first {
				to = afterComma(raw, end)
			}
		}
		prevEnd, first = end, false
	}
	if _, err := dec.Token(); err != nil {
		return 0, 0, nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, 0, nil, errNotObject
	}
	return from, to, value, nil
}

// afterComma is the offset past the comma that follows offset i (past
// whitespace), or i when none does.
func afterComma(raw []byte, i int) int {
	j := i
	for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
		j++
	}
	if j < len(raw) && raw[j] == ',' {
		return j + 1
	}
	return i
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
