// Command countersign is the one binary: the server (serve), the people's
// CLI (pending, show, approve, deny, grants, revoke), the agent-side
// integrations (hook, mcp-proxy) and the load generator (bench).
//
// Each subcommand lives in its own file and registers itself in init with
// register; main only dispatches.
package main

import (
	"fmt"
	"os"
	"sort"
)

// command is one subcommand: it parses its own flags from args and returns
// the process exit code.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

// register adds a subcommand; called from init in each command's file.
func register(name, summary string, run func(args []string) int) {
	commands[name] = command{summary: summary, run: run}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "countersign: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: countersign <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, commands[n].summary)
	}
}
