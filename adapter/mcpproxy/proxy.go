package mcpproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReasonArg is the argument added to every re-exported tool.
const ReasonArg = "countersign_reason"

// syncTimeout bounds one re-read of the upstream's lists.
const syncTimeout = 30 * time.Second

// Gate is the part of *adapter.Client the proxy uses.
type Gate interface {
	Do(ctx context.Context, call adapter.Call, run func(context.Context) error) (adapter.Outcome, error)
}

var _ Gate = (*adapter.Client)(nil)

// Config configures a Proxy.
type Config struct {
	// Gate asks countersign; required.
	Gate Gate
	// Session is the countersign session of every call. Empty: the
	// downstream MCP session id, or else one fresh id per proxy.
	Session string
	// Name is the proxy's MCP implementation name (default
	// "countersign-mcp-proxy").
	Name string
	// Logger gets the proxy's warnings (default: discarded).
	Logger *slog.Logger
	// Connection, when set, makes the upstream an app connection with this
	// id (a configured id, [A-Za-z0-9_-]{1,64}): every call is submitted as
	// apps.call:<Connection>/<tool> with connection {id: Connection,
	// revision: Revision()} instead of tools.call:<tool>.
	Connection string
	// Upstream describes the upstream's configuration for the connection
	// revision. Empty: the command line or URL of the transport given to
	// Connect (a *mcp.CommandTransport or *mcp.StreamableClientTransport).
	Upstream string
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = "countersign-mcp-proxy"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Session == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Session = "mcp-" + hex.EncodeToString(b[:])
	}
}

// Proxy mirrors one upstream MCP session into an MCP server.
type Proxy struct {
	cfg       Config
	fixedSess bool
	upstream  *mcp.ClientSession
	server    *mcp.Server
	mu        sync.Mutex // guards the mirrored names and Sync
	tools     []string
	resources []string
	templates []string
	prompts   []string
	rev       atomic.Int64 // the connection revision of the tools served
}

// Connect starts an MCP client session to upstream (a command or a URL
// transport), mirrors it, and keeps the mirror current on the upstream's
// list-changed notifications. Close the Proxy to end the upstream session.
// It returns ErrNoGate without cfg.Gate, ErrBadConnection for a
// cfg.Connection that is no configured id, or the upstream's connect error.
func Connect(ctx context.Context, upstream mcp.Transport, cfg Config) (*Proxy, error) {
	if cfg.Gate == nil {
		return nil, ErrNoGate
	}
	if cfg.Connection != "" && !domain.ConfigIDPattern.MatchString(cfg.Connection) {
		return nil, fmt.Errorf("%w: %q", ErrBadConnection, cfg.Connection)
	}
	if cfg.Upstream == "" {
		cfg.Upstream = describeUpstream(upstream)
	}
	p := &Proxy{fixedSess: cfg.Session != ""}
	cfg.setDefaults()
	p.cfg = cfg
	// A notification handler must not wait for the upstream (that would
	// hold up the session's reads), so the re-read runs on its own.
	resync := func(ctx context.Context) {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
			defer cancel()
			if err := p.Sync(ctx); err != nil {
				p.cfg.Logger.Warn("mcpproxy: re-reading the upstream lists failed", "err", err)
			}
		}()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: cfg.Name, Version: "v1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(ctx context.Context, _ *mcp.ToolListChangedRequest) { resync(ctx) },
		ResourceListChangedHandler: func(ctx context.Context, _ *mcp.ResourceListChangedRequest) { resync(ctx) },
		PromptListChangedHandler:   func(ctx context.Context, _ *mcp.PromptListChangedRequest) { resync(ctx) },
	})
	cs, err := client.Connect(ctx, upstream, nil)
	if err != nil {
		return nil, fmt.Errorf("mcpproxy: connect upstream: %w", err)
	}
	if err := p.attach(ctx, cs); err != nil {
		cs.Close()
		return nil, err
	}
	return p, nil
}

// attach builds the server for the upstream session cs and mirrors it.
func (p *Proxy) attach(ctx context.Context, cs *mcp.ClientSession) error {
	init := cs.InitializeResult()
	caps := &mcp.ServerCapabilities{}
	if init != nil && init.Capabilities != nil {
		caps = init.Capabilities
	}
	mine := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if caps.Resources != nil {
		mine.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	if caps.Prompts != nil {
		mine.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	opts := &mcp.ServerOptions{Logger: p.cfg.Logger, Capabilities: mine}
	if init != nil {
		opts.Instructions = init.Instructions
	}
	p.mu.Lock()
	p.upstream = cs
	p.server = mcp.NewServer(&mcp.Implementation{Name: p.cfg.Name, Version: "v1"}, opts)
	p.mu.Unlock()
	return p.Sync(ctx)
}

// Server is the MCP server to serve downstream (stdio or streamable HTTP).
func (p *Proxy) Server() *mcp.Server { return p.server }

// Revision is the connection revision calls are submitted with now (0
// without Config.Connection). It changes when the upstream's tool list
// does, and is the same in every proxy of the same connection id,
// upstream configuration and tool list.
func (p *Proxy) Revision() int64 { return p.rev.Load() }

// Close ends the upstream session.
func (p *Proxy) Close() error { return p.upstream.Close() }

// Sync re-reads the upstream's tools, resources, resource templates and
// prompts and mirrors them, removing those that are gone.
func (p *Proxy) Sync(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.upstream == nil {
		return nil // still connecting; attach syncs
	}
	caps := &mcp.ServerCapabilities{}
	if init := p.upstream.InitializeResult(); init != nil && init.Capabilities != nil {
		caps = init.Capabilities
	}
	errs := []error{p.syncTools(ctx)}
	if caps.Resources != nil {
		errs = append(errs, p.syncResources(ctx), p.syncTemplates(ctx))
	}
	if caps.Prompts != nil {
		errs = append(errs, p.syncPrompts(ctx))
	}
	return errors.Join(errs...)
}

// gone returns the names in old that are not in now.
func gone(old, now []string) []string {
	keep := make(map[string]bool, len(now))
	for _, n := range now {
		keep[n] = true
	}
	var out []string
	for _, n := range old {
		if !keep[n] {
			out = append(out, n)
		}
	}
	return out
}

// guard runs add, turning a panic over bad upstream data into a warning.
func (p *Proxy) guard(what, name string, add func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p.cfg.Logger.Warn("mcpproxy: not re-exported", what, name, "err", r)
			ok = false
		}
	}()
	add()
	return true
}
