package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/countersign/countersign/adapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reasonSchema describes ReasonArg in every re-exported tool.
var reasonSchema = map[string]any{
	"type": "string",
	"description": "Why this call is needed, in one or two plain sentences. " +
		"It is shown to whoever approves the call; it is not passed to the tool.",
}

func (p *Proxy) syncTools(ctx context.Context) error {
	var names []string
	for t, err := range p.upstream.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpproxy: list tools: %w", err)
		}
		tool, err := reexport(t)
		if err != nil {
			p.cfg.Logger.Warn("mcpproxy: tool not re-exported", "tool", t.Name, "err", err)
			continue
		}
		if p.guard("tool", t.Name, func() { p.server.AddTool(tool, p.handler(t.Name)) }) {
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

// handler gates one tool's calls through countersign.
func (p *Proxy) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, reason, err := stripReason(req.Params.Arguments)
		if err != nil {
			return errorResult("countersign proxy: " + err.Error() + "; the call did not run"), nil
		}
		call := adapter.Call{Tool: name, Arguments: args, Reason: reason, Session: p.session(req)}
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
// Arguments without it are returned byte for byte.
func stripReason(raw json.RawMessage) (json.RawMessage, string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}"), "", nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, "", fmt.Errorf("arguments must be a JSON object")
	}
	r, ok := obj[ReasonArg]
	if !ok {
		return raw, "", nil
	}
	var reason string
	if err := json.Unmarshal(r, &reason); err != nil {
		return nil, "", fmt.Errorf("%s must be a string", ReasonArg)
	}
	delete(obj, ReasonArg)
	args, err := json.Marshal(obj)
	return args, reason, err
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
