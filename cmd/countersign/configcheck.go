package main

// `countersign config check FILE` (SPEC §10): validates a config file
// offline with the validation serve runs (app.Check: the variables the
// file names are read from this environment, as serve reads them), and
// with a token of scope admin prints what applying it would
// change against the running revision, read from GET /v1/config.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/cli"
	"github.com/countersign/countersign/kvstate"
)

const configUsage = "config check FILE [--url U] [--token T]"

func runConfig(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return configCheck(ctx, args, cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
}

// runningConfig is GET /v1/config's answer.
type runningConfig struct {
	Revision  uint64         `json:"revision"`
	SHA256    string         `json:"sha256"`
	AppliedAt *time.Time     `json:"applied_at"`
	Tenant    config.Outline `json:"tenant"`
}

// configCheck exits 0 when FILE loads (printing the changes when a token
// was given), 1 when it does not load or the server refused, 2 on a usage
// error.
func configCheck(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: countersign %s\n\nValidate a config file; with a token of scope admin, print what it changes against the running revision.\n\nflags:\n", configUsage)
		fs.PrintDefaults()
	}
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	pos, err := cliParseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return cliExitOK
	}
	if err == nil && (len(pos) != 2 || pos[0] != "check") {
		err = errors.New("want: check FILE")
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign config: %v\nusage: countersign %s\n", err, configUsage)
		return cliExitUsage
	}
	if o.token == "" {
		o.token = env.getenv("COUNTERSIGN_TOKEN")
	}
	return checkFile(ctx, pos[1], o, env)
}

func checkFile(ctx context.Context, file string, o *cliOpts, env cliEnv) int {
	raw, err := os.ReadFile(file)
	var cfg *config.Config
	if err == nil {
		cfg, err = config.Parse(raw)
	}
	if err == nil {
		err = app.Check(cfg) // serve's own validation, environment included
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign config check: %s: %v\n", file, err)
		return cliExitRefused
	}
	sum := kvstate.ConfigSHA256(raw)
	fmt.Fprintf(env.stdout, "%s: valid (sha256 %s)\n", file, sum)
	if o.token == "" {
		fmt.Fprintln(env.stdout, "not compared with the running revision: no --token (scope admin) given")
		return cliExitOK
	}
	running, err := fetchRunning(ctx, o, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign config check: %v\n", err)
		return cliExitRefused
	}
	printChanges(env, cfg, sum, running)
	return cliExitOK
}

func fetchRunning(ctx context.Context, o *cliOpts, env cliEnv) (runningConfig, error) {
	var r runningConfig
	c, err := cli.New(o.url, o.token, env.http)
	if err != nil {
		return r, err
	}
	raw, err := c.Config(ctx)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("the server's answer to GET /v1/config is not what countersign sends: %w", err)
	}
	return r, nil
}

// printChanges prints what cfg changes against running, for the tenant the
// token belongs to (the only one GET /v1/config shows it).
func printChanges(env cliEnv, cfg *config.Config, sum string, running runningConfig) {
	fmt.Fprintf(env.stdout, "running revision %d (sha256 %s)\n", running.Revision, running.SHA256)
	if sum == running.SHA256 {
		fmt.Fprintln(env.stdout, "no change: this file is the running revision")
		return
	}
	tenants, _ := cfg.DomainTenants() // Parse validated them
	var next []config.Outline
	for _, t := range tenants {
		if string(t.ID) == running.Tenant.Tenant {
			next = append(next, config.OutlineOf(t))
		}
	}
	lines := config.DiffTenants([]config.Outline{running.Tenant}, next)
	for _, l := range lines {
		fmt.Fprintln(env.stdout, l)
	}
	if len(lines) == 0 {
		fmt.Fprintln(env.stdout, "tenant "+running.Tenant.Tenant+": no member, agent, token or setting changes (other tenants, webhooks or a token replaced by one with the same principal and scopes may differ)")
	}
	if len(tenants) > len(next) {
		fmt.Fprintf(env.stdout, "other tenants are not compared: the token sees tenant %s only\n", running.Tenant.Tenant)
	}
}
