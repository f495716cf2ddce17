package main

// The people's CLI (SPEC §10): pending, show, approve, deny, grants, revoke.
// Each command talks to the HTTP API with a person's (or deciding agent's)
// token, prints a table by default and the server's JSON with --json, and
// exits 0 on success, 1 when the server refuses or cannot be reached, and 2
// on a usage error. This file is the flags and the exit codes; internal/cli
// talks to the server and prints.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/countersign/countersign/internal/cli"
)

// Exit codes of the CLI commands.
const (
	cliExitOK      = 0
	cliExitRefused = 1 // the server refused, or could not be reached
	cliExitUsage   = 2
)

// cliDefaultURL is the server the CLI talks to when neither --url nor
// COUNTERSIGN_URL says otherwise.
const cliDefaultURL = "http://127.0.0.1:8080"

// cliEnv is what a CLI command may touch outside its arguments; tests
// capture the output and supply the environment.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	http           *http.Client // nil: a client with a 30s timeout
	// configDir is where countersign login keeps the session (nil: no
	// kept session is read).
	configDir func() (string, error)
}

// cliOpts are the parsed flags and arguments of one invocation.
type cliOpts struct {
	url, token string
	json       bool
	scope      string
	reason     string
	rule       string
	arguments  string // a file: approve with edits
	agent      string
	revoked    bool
	args       []string // positional arguments
}

// cliCommand is one CLI subcommand: its flags, how many positional
// arguments it takes (nargsSome: one or more ids), and what it does.
type cliCommand struct {
	name, usage, summary string
	nargs                int
	flags                func(fs *flag.FlagSet, o *cliOpts)
	run                  func(ctx context.Context, s cli.Session, o *cliOpts) error
}

// nargsSome as cliCommand.nargs: one id or more.
const nargsSome = -1

var cliCommands = []cliCommand{
	{name: "pending", usage: "pending", summary: "list the requests waiting for you",
		run: func(ctx context.Context, s cli.Session, _ *cliOpts) error { return s.Pending(ctx) }},
	{name: "show", usage: "show ID", summary: "show one request", nargs: 1,
		run: func(ctx context.Context, s cli.Session, o *cliOpts) error { return s.Show(ctx, o.args[0]) }},
	{name: "approve", usage: "approve ID [ID…] [--scope once|session|lifetime] [--reason R] [--rule R] [--arguments FILE]",
		summary: "approve requests (several: one capability, the same argument keys)", nargs: nargsSome, flags: cliAnswerFlags(true), run: cliAnswer("allow")},
	{name: "deny", usage: "deny ID [ID…] [--scope once|session|lifetime] [--reason R]",
		summary: "deny requests (several: one capability, the same argument keys)", nargs: nargsSome, flags: cliAnswerFlags(false), run: cliAnswer("deny")},
	{name: "grants", usage: "grants [--agent A] [--revoked]", summary: "list kept grants", flags: cliGrantFlags,
		run: func(ctx context.Context, s cli.Session, o *cliOpts) error {
			return s.Grants(ctx, cli.GrantFilter{Agent: o.agent, Revoked: o.revoked})
		}},
	{name: "revoke", usage: "revoke ID", summary: "revoke a grant", nargs: 1,
		run: func(ctx context.Context, s cli.Session, o *cliOpts) error { return s.Revoke(ctx, o.args[0]) }},
}

// cliAnswer runs approve (decision allow) or deny.
func cliAnswer(decision string) func(context.Context, cli.Session, *cliOpts) error {
	return func(ctx context.Context, s cli.Session, o *cliOpts) error {
		in := cli.AnswerInput{Decision: decision, Scope: o.scope, Reason: o.reason, Rule: o.rule}
		if o.arguments != "" {
			raw, err := os.ReadFile(o.arguments)
			if err != nil {
				return fmt.Errorf("--arguments: %w", err)
			}
			if !json.Valid(raw) {
				return fmt.Errorf("--arguments: %s is not JSON", o.arguments)
			}
			in.Arguments = raw
		}
		return s.AnswerAll(ctx, o.args, in)
	}
}

// cliEntries are the CLI commands as entries of the command table.
func cliEntries() map[string]command {
	out := map[string]command{}
	for _, c := range cliCommands {
		out[c.name] = command{summary: c.summary + ": " + c.usage, run: func(args []string) int {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runCLI(ctx, c.name, args, cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, configDir: os.UserConfigDir})
		}}
	}
	return out
}

// runCLI runs the CLI command name with args and returns its exit code.
func runCLI(ctx context.Context, name string, args []string, env cliEnv) int {
	cmd, ok := cliLookup(name)
	if !ok {
		fmt.Fprintf(env.stderr, "countersign: unknown command %q\n", name)
		return cliExitUsage
	}
	o, code := cliParse(cmd, args, env)
	if o == nil {
		return code
	}
	c, err := cli.New(o.url, o.token, env.http)
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign %s: %v\n", name, err)
		return cliExitUsage
	}
	if err := cmd.run(ctx, cli.Session{Client: c, Out: env.stdout, JSON: o.json}, o); err != nil {
		fmt.Fprintf(env.stderr, "countersign %s: %v\n", name, err)
		return cliExitRefused
	}
	return cliExitOK
}

func cliLookup(name string) (cliCommand, bool) {
	for _, c := range cliCommands {
		if c.name == name {
			return c, true
		}
	}
	return cliCommand{}, false
}

// cliParse parses args for cmd. It returns nil options and the exit code
// when the invocation ends here (a usage error, or -h).
func cliParse(cmd cliCommand, args []string, env cliEnv) (*cliOpts, int) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: countersign %s [--url U] [--token T] [--json]\n\n%s.\n\nflags:\n", cmd.usage, cmd.summary)
		fs.PrintDefaults()
	}
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	if cmd.flags != nil {
		cmd.flags(fs, o)
	}
	pos, err := cliParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, cliExitOK
	}
	if o.token == "" {
		o.token = env.getenv("COUNTERSIGN_TOKEN")
	}
	if o.token == "" {
		o.token = storedToken(env, o.url)
	}
	if err == nil {
		err = cliCheck(cmd, o, pos)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign %s: %v\nusage: countersign %s\n", cmd.name, err, cmd.usage)
		return nil, cliExitUsage
	}
	o.args = pos
	return o, cliExitOK
}

func cliCommonFlags(fs *flag.FlagSet, o *cliOpts, getenv func(string) string) {
	u := getenv("COUNTERSIGN_URL")
	if u == "" {
		u = cliDefaultURL
	}
	fs.StringVar(&o.url, "url", u, "countersign server (env COUNTERSIGN_URL)")
	// The token's default is read after parsing, so that -h never prints it.
	fs.StringVar(&o.token, "token", "", "your token (default: env COUNTERSIGN_TOKEN)")
	fs.BoolVar(&o.json, "json", false, "print the server's JSON instead of a table")
}

func cliAnswerFlags(withRule bool) func(fs *flag.FlagSet, o *cliOpts) {
	return func(fs *flag.FlagSet, o *cliOpts) {
		fs.StringVar(&o.scope, "scope", "once", "once, session (a grant for the request's session) or lifetime (a lasting grant)")
		fs.StringVar(&o.reason, "reason", "", "why; kept as the decision's note")
		if withRule {
			fs.StringVar(&o.rule, "rule", "", "a plain-language rule to keep for the requesting agent")
			fs.StringVar(&o.arguments, "arguments", "", "a JSON file: approve with edits, the call runs with these arguments instead (scope once)")
		}
	}
}

func cliGrantFlags(fs *flag.FlagSet, o *cliOpts) {
	fs.StringVar(&o.agent, "agent", "", "only this agent's grants")
	fs.BoolVar(&o.revoked, "revoked", false, "include revoked grants")
}

// cliParseInterleaved parses flags that may come before or after the
// positional arguments (`approve ID --scope session`): the flag package
// stops at the first non-flag, so parsing resumes after each one. After a
// "--" everything is positional.
func cliParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// cliCheck validates what the flag package cannot: argument count, scope
// values and a token.
func cliCheck(cmd cliCommand, o *cliOpts, pos []string) error {
	if cmd.nargs == nargsSome {
		if len(pos) == 0 {
			return errors.New("want one id or more")
		}
		for _, p := range pos {
			if strings.TrimSpace(p) == "" {
				return errors.New("an id is empty")
			}
		}
		if o.arguments != "" && len(pos) > 1 {
			return errors.New("--arguments edits one request: give one id")
		}
	}
	switch {
	case cmd.nargs == nargsSome && len(pos) > 0:
		// checked above
	case len(pos) != cmd.nargs && cmd.nargs == 0:
		return fmt.Errorf("unexpected arguments %q", pos)
	case len(pos) != cmd.nargs:
		return fmt.Errorf("want %d argument(s), got %d", cmd.nargs, len(pos))
	case cmd.nargs == 1 && strings.TrimSpace(pos[0]) == "":
		return errors.New("the id is empty")
	}
	switch {
	case o.scope != "" && o.scope != "once" && o.scope != "session" && o.scope != "lifetime":
		return fmt.Errorf("--scope must be once, session or lifetime, not %q", o.scope)
	case o.token == "":
		return errors.New("no token: pass --token, set COUNTERSIGN_TOKEN or run countersign login")
	}
	return nil
}
