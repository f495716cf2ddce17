package main

// countersign audit export [--after N] and countersign audit verify
// [--checkpoint OLD --key KEY] FILE (SPEC §14). verify needs no server:
// it checks every entry's hash and link, and with --checkpoint that the
// file's first entries are those of a checkpoint saved earlier.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/cli"
)

const auditUsage = "audit export [--after N] | audit verify [--checkpoint OLD --key KEY] FILE"

func runAudit(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	if len(args) > 0 && args[0] == "export" {
		return auditExport(ctx, args[1:], env)
	}
	if len(args) > 0 && args[0] == "verify" {
		return auditVerify(args[1:], env)
	}
	fmt.Fprintf(env.stderr, "usage: countersign %s\n", auditUsage)
	return cliExitUsage
}

func auditExport(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("audit export", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	after := fs.Uint64("after", 0, "start after this entry's seq")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return cliExitUsage
	}
	if o.token == "" {
		o.token = env.getenv("COUNTERSIGN_TOKEN")
	}
	c, err := cli.New(o.url, o.token, env.http)
	if err == nil {
		err = c.ExportAudit(ctx, *after, env.stdout)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign audit export: %v\n", err)
		return cliExitRefused
	}
	return cliExitOK
}

func auditVerify(args []string, env cliEnv) int {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	checkpoint := fs.String("checkpoint", "", "a signed checkpoint saved earlier (GET /v1/audit/checkpoint): prove the file extends it")
	key := fs.String("key", "", "with --checkpoint: the verifier key (GET /v1/audit/key), or a file holding it")
	pos, err := cliParseInterleaved(fs, args)
	if err != nil || len(pos) != 1 || (*checkpoint != "") != (*key != "") {
		fmt.Fprintf(env.stderr, "usage: countersign audit verify [--checkpoint OLD --key KEY] FILE\n")
		return cliExitUsage
	}
	msg, err := verifyFile(pos[0], *checkpoint, *key)
	var bad *audit.BadEntryError
	switch {
	case errors.As(err, &bad):
		fmt.Fprintf(env.stdout, "entry %d (line %d) breaks the chain: %s\n", bad.Seq, bad.Line, bad.Reason)
		return cliExitRefused
	case err != nil:
		fmt.Fprintf(env.stderr, "countersign audit verify: %v\n", err)
		return cliExitRefused
	}
	fmt.Fprintln(env.stdout, msg)
	return cliExitOK
}

// verifyFile checks the log in path and, when checkpoint is set, that it
// extends that checkpoint; it returns what to print.
func verifyFile(path, checkpoint, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	chain, err := audit.VerifyLog(f)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("ok: %d entries checked", chain.Len())
	if checkpoint == "" {
		return msg, nil
	}
	note, err := os.ReadFile(checkpoint)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(key); err == nil {
		key = string(b)
	}
	cp, err := audit.OpenCheckpoint(note, key)
	if err != nil {
		return "", err
	}
	if err := audit.CheckExtends(chain, cp, audit.Origin(domain.TenantID(chain.Tenant()))); err != nil {
		return "", err
	}
	return msg + fmt.Sprintf("; its first %d are the checkpoint's", cp.Size), nil
}
