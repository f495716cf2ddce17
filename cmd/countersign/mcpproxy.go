package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/adapter/mcpproxy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func runMCPProxy(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stdout carries MCP
	cfg, upstream, listen, err := mcpProxySetup(args, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "countersign mcp-proxy:", err)
		return 2
	}
	p, err := mcpproxy.Connect(ctx, upstream, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "countersign mcp-proxy:", err)
		return 1
	}
	defer p.Close()
	if err := serveMCP(ctx, p.Server(), listen, log); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "countersign mcp-proxy:", err)
		return 1
	}
	return 0
}

// mcpProxySetup parses the flags into the proxy's config, the upstream
// transport and the listen address ("" for stdio).
func mcpProxySetup(args []string, log *slog.Logger) (mcpproxy.Config, mcp.Transport, string, error) {
	fs := flag.NewFlagSet("mcp-proxy", flag.ContinueOnError)
	url, token := agentServerFlags(fs)
	wait := fs.Duration("wait", 540*time.Second, "longest a tool call waits for a decision; keep it under the MCP client's tool-call timeout")
	session := fs.String("session", "", "countersign session of every call (default: the MCP session id, else one per proxy process)")
	listen := fs.String("listen", "", "serve streamable HTTP on this address instead of stdio")
	upURL := fs.String("upstream-url", "", "upstream MCP server's streamable HTTP endpoint (instead of a command)")
	conn := fs.String("connection", "", "submit calls as apps.call:<ID>/<tool>, bound to this app connection's revision (derived from the upstream's tools and configuration)")
	if err := fs.Parse(args); err != nil {
		return mcpproxy.Config{}, nil, "", err
	}
	gate, err := adapter.New(*url, *token, adapter.WithWaitLimit(*wait))
	if err != nil {
		return mcpproxy.Config{}, nil, "", err
	}
	cfg := mcpproxy.Config{Gate: gate, Session: *session, Logger: log, Connection: *conn}
	switch {
	case *upURL != "" && fs.NArg() > 0:
		return cfg, nil, "", errors.New("give --upstream-url or an upstream command, not both")
	case *upURL != "":
		return cfg, &mcp.StreamableClientTransport{Endpoint: *upURL}, *listen, nil
	case fs.NArg() == 0:
		return cfg, nil, "", errors.New("no upstream: give --upstream-url URL or -- command args")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stderr = os.Stderr
	return cfg, &mcp.CommandTransport{Command: cmd}, *listen, nil
}

// serveMCP serves s on stdio, or on streamable HTTP at listen, until ctx
// ends or the stdio client goes away.
func serveMCP(ctx context.Context, s *mcp.Server, listen string, log *slog.Logger) error {
	if listen == "" {
		return s.Run(ctx, &mcp.StdioTransport{})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := &http.Server{Addr: listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	log.Info("listening on " + ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
