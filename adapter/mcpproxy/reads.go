package mcpproxy

import (
	"context"
	"fmt"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources, resource templates and prompts pass through ungated.

func (p *Proxy) syncResources(ctx context.Context) error {
	return mirror(p, "resource", p.upstream.Resources(ctx, nil), func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource) { p.server.AddResource(r, p.readResource) }, p.server.RemoveResources, &p.resources)
}

func (p *Proxy) syncTemplates(ctx context.Context) error {
	return mirror(p, "resource template", p.upstream.ResourceTemplates(ctx, nil), func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate) { p.server.AddResourceTemplate(t, p.readResource) }, p.server.RemoveResourceTemplates, &p.templates)
}

func (p *Proxy) syncPrompts(ctx context.Context) error {
	return mirror(p, "prompt", p.upstream.Prompts(ctx, nil), func(pr *mcp.Prompt) string { return pr.Name },
		func(pr *mcp.Prompt) { p.server.AddPrompt(pr, p.getPrompt) }, p.server.RemovePrompts, &p.prompts)
}

// mirror adds downstream every item the upstream lists (an item whose add
// panics is skipped with a warning), removes those named in *had that are
// gone, and records the names now served in *had. what names the kind of
// item in messages.
func mirror[T any](p *Proxy, what string, list iter.Seq2[T, error], name func(T) string, add func(T), remove func(...string), had *[]string) error {
	var names []string
	for it, err := range list {
		if err != nil {
			return fmt.Errorf("mcpproxy: list %ss: %w", what, err)
		}
		if p.guard(what, name(it), func() { add(it) }) {
			names = append(names, name(it))
		}
	}
	remove(gone(*had, names)...)
	*had = names
	return nil
}

func (p *Proxy) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return p.upstream.ReadResource(ctx, req.Params)
}

func (p *Proxy) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return p.upstream.GetPrompt(ctx, req.Params)
}
