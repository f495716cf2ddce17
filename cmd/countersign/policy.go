package main

// countersign policy replay --config FILE [--tenant T] [--since 720h]
// [--json] [--log FILE] (SPEC §16): what FILE would have done with the
// requests of the window. With --log, an exported audit log (countersign
// audit export) is replayed here, without a server. policy suggest is in
// suggest.go.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/internal/cli"
)

const policyUsage = "policy replay --config FILE [--tenant T] [--since 720h] [--json] [--log EXPORT]"

func runPolicy(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	if len(args) > 0 && args[0] == "replay" {
		return policyReplay(ctx, args[1:], env)
	}
	if len(args) > 0 && args[0] == "suggest" {
		return policySuggest(ctx, args[1:], env)
	}
	fmt.Fprintf(env.stderr, "usage: countersign %s | %s\n", policyUsage, suggestUsage)
	return cliExitUsage
}

type replayFlags struct {
	cliOpts
	config, tenant, since, log string
}

func policyReplay(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("policy replay", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	f := &replayFlags{}
	cliCommonFlags(fs, &f.cliOpts, env.getenv)
	fs.StringVar(&f.config, "config", "", "the candidate config file (required)")
	fs.StringVar(&f.tenant, "tenant", "", "the tenant (default: the token's; with --log, the log's)")
	fs.StringVar(&f.since, "since", "720h", "the window: requests created this long ago or since")
	fs.StringVar(&f.log, "log", "", "replay this exported audit log (countersign audit export) here, without a server")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || f.config == "" {
		fmt.Fprintf(env.stderr, "usage: countersign %s\n", policyUsage)
		return cliExitUsage
	}
	yaml, err := os.ReadFile(f.config)
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign policy replay: %v\n", err)
		return cliExitUsage
	}
	var rep replay.Report
	if f.log != "" {
		rep, err = replayFile(ctx, yaml, f)
	} else {
		rep, err = replayServer(ctx, yaml, f, env)
	}
	if err == nil {
		err = printReport(env, rep, f.json)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign policy replay: %v\n", err)
		return cliExitRefused
	}
	return cliExitOK
}

func replayServer(ctx context.Context, yaml []byte, f *replayFlags, env cliEnv) (replay.Report, error) {
	if f.token == "" {
		f.token = env.getenv("COUNTERSIGN_TOKEN")
	}
	c, err := cli.New(f.url, f.token, env.http)
	if err != nil {
		return replay.Report{}, err
	}
	raw, err := c.ReplayPolicy(ctx, yaml, f.since, f.tenant)
	if err != nil {
		return replay.Report{}, err
	}
	var rep replay.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return replay.Report{}, fmt.Errorf("the server's report: %w", err)
	}
	return rep, nil
}

func printReport(env cliEnv, rep replay.Report, asJSON bool) error {
	if !asJSON {
		return replay.WriteText(env.stdout, rep)
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
