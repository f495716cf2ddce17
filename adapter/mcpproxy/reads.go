package mcpproxy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources, resource templates and prompts pass through ungated.

func (p *Proxy) syncResources(ctx context.Context) error {
	var uris []string
	for r, err := range p.upstream.Resources(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpproxy: list resources: %w", err)
		}
		if p.guard("resource", r.URI, func() { p.server.AddResource(r, p.readResource) }) {
			uris = append(uris, r.URI)
		}
	}
	p.server.RemoveResources(gone(p.resources, uris)...)
	p.resources = uris
	return nil
}

func (p *Proxy) syncTemplates(ctx context.Context) error {
	var names []string
	for t, err := range p.upstream.ResourceTemplates(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpproxy: list resource templates: %w", err)
		}
		if p.guard("resource template", t.URITemplate, func() { p.server.AddResourceTemplate(t, p.readResource) }) {
			names = append(names, t.URITemplate)
		}
	}
	p.server.RemoveResourceTemplates(gone(p.templates, names)...)
	p.templates = names
	return nil
}

func (p *Proxy) syncPrompts(ctx context.Context) error {
	var names []string
	for pr, err := range p.upstream.Prompts(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpproxy: list prompts: %w", err)
		}
		if p.guard("prompt", pr.Name, func() { p.server.AddPrompt(pr, p.getPrompt) }) {
			names = append(names, pr.Name)
		}
	}
	p.server.RemovePrompts(gone(p.prompts, names)...)
	p.prompts = names
	return nil
}

func (p *Proxy) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return p.upstream.ReadResource(ctx, req.Params)
}

func (p *Proxy) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return p.upstream.GetPrompt(ctx, req.Params)
}
