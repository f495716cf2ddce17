package main

// countersign login (SPEC §13): the device flow through the server, the
// session kept in the user's config directory for the people's CLI.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/countersign/countersign/internal/cli"
)

func runLogin(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return login(ctx, args, cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, configDir: os.UserConfigDir})
}

func login(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || env.configDir == nil {
		fmt.Fprintln(env.stderr, "usage: countersign login [--url U]")
		return cliExitUsage
	}
	dir, err := env.configDir()
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign login: no config directory: %v\n", err)
		return cliExitRefused
	}
	c, err := cli.New(o.url, "", env.http)
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign login: %v\n", err)
		return cliExitUsage
	}
	s, err := c.Login(ctx, env.stdout)
	if err == nil {
		err = cli.SaveSession(cli.SessionPath(dir), s)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign login: %v\n", err)
		return cliExitRefused
	}
	fmt.Fprintf(env.stdout, "Signed in as %s (tenant %s) until %s.\n", s.Member, s.Tenant, s.ExpiresAt.Local().Format(time.DateTime))
	return cliExitOK
}

// storedToken is the session countersign login kept for url, or "".
func storedToken(env cliEnv, url string) string {
	if env.configDir == nil {
		return ""
	}
	dir, err := env.configDir()
	if err != nil {
		return ""
	}
	tok, _ := cli.LoadSession(cli.SessionPath(dir), strings.TrimRight(url, "/"), time.Now())
	return tok
}
