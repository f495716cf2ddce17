// Command countersign is the one binary: the server (serve), the people's
// CLI (pending, show, approve, deny, grants, revoke), the agent-side
// integrations (hook, mcp-proxy) and the load generator (bench).
//
// Each subcommand lives in its own file; the table below names them all,
// and main only dispatches.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand: it parses its own flags from args and returns
// the process exit code.
type command struct {
	summary string
	run     func(args []string) int
}

// commands is the table of subcommands.
var commands = func() map[string]command {
	t := map[string]command{
		"serve":     {"run the server (embedded NATS unless --nats-url)", runServe},
		"hook":      {"answer an agent harness's PreToolUse hook: hook claude-code [--format claude|codex|gemini]", runHook},
		"mcp-proxy": {"gate an upstream MCP server's tools/call: mcp-proxy [flags] (--upstream-url URL | -- command args...)", runMCPProxy},
		"bench":     {"load and latency figures over real HTTP and the bus (grant, grant-bus, person, agent, judge, hold, fill)", runBench},
		"config":    {"validate a config file and show what it changes: " + configUsage, runConfig},
		"login":     {"sign in with the identity provider (device flow) for the commands below: login [--url U]", runLogin},
		"audit":     {"export or verify the audit log: " + auditUsage, runAudit},
		"rpc":       {"the live approver protocol from a terminal: JSON-RPC lines on stdin to /v1/rpc, the server's on stdout: " + rpcUsage, runRPC},
		"policy":    {"see what a config would have done, or what to grant: " + policyUsage + " | " + suggestUsage, runPolicy},
	}
	for name, c := range cliEntries() {
		t[name] = c
	}
	return t
}()

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run dispatches args to their command and returns the exit code. help,
// -h and --help print the usage to stdout and exit 0; `help CMD` is
// `CMD -h`.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "countersign: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: countersign <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n`countersign help <command>` shows a command's flags.")
}
