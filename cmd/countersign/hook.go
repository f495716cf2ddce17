package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/adapter/hook"
)

// agentDefaultURL is where the agent-side commands look when neither --url
// nor COUNTERSIGN_URL says otherwise.
const agentDefaultURL = "http://127.0.0.1:8080"

// runHook always exits 0 with the harness's decision JSON on stdout.
func runHook(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, gate, err := hookSetup(args, os.Stderr)
	if err != nil {
		_ = hook.Write(os.Stdout, f, hook.Deny("countersign hook is misconfigured ("+err.Error()+"); the call must not run"))
		return 0
	}
	v := hook.Run(ctx, gate, f, os.Stdin, os.Stdout)
	fmt.Fprintln(os.Stderr, v.Reason)
	return 0
}

// hookSetup parses `[claude-code|codex|gemini] [flags]` into a format and an
// adapter client.
func hookSetup(args []string, stderr io.Writer) (hook.Format, *adapter.Client, error) {
	f := hook.Claude
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		var err error
		if f, err = hook.ParseFormat(args[0]); err != nil {
			return f, nil, err
		}
		args = args[1:]
	}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url, token := agentServerFlags(fs)
	wait := fs.Duration("wait", 540*time.Second, "longest a call waits for a decision; keep it under the harness's hook timeout (600s in Claude Code)")
	format := fs.String("format", string(f), "hook protocol: claude, codex or gemini")
	if err := fs.Parse(args); err != nil {
		return f, nil, err
	}
	if fs.NArg() > 0 {
		return f, nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	f, err := hook.ParseFormat(*format)
	if err != nil {
		return f, nil, err
	}
	if *wait <= 0 {
		return f, nil, errors.New("--wait must be positive")
	}
	c, err := adapter.New(*url, *token, adapter.WithWaitLimit(*wait))
	return f, c, err
}

// agentServerFlags adds --url and --token, defaulting to COUNTERSIGN_URL and
// COUNTERSIGN_TOKEN.
func agentServerFlags(fs *flag.FlagSet) (url, token *string) {
	u := os.Getenv("COUNTERSIGN_URL")
	if u == "" {
		u = agentDefaultURL
	}
	url = fs.String("url", u, "countersign server (env COUNTERSIGN_URL)")
	token = fs.String("token", os.Getenv("COUNTERSIGN_TOKEN"), "agent token (env COUNTERSIGN_TOKEN)")
	return url, token
}
