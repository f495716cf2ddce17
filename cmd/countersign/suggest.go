package main

// countersign policy suggest [--since 720h] [--min 5] [--json] [--log
// EXPORT] (SPEC §16): per agent, what people allowed at least --min times
// and never denied in the window, read from the audit log (GET /v1/audit,
// or an export), printed as YAML. It applies nothing.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/internal/cli"
)

const suggestUsage = "policy suggest [--since 720h] [--min 5] [--json] [--log EXPORT]"

func policySuggest(ctx context.Context, args []string, env cliEnv) int {
	fs := flag.NewFlagSet("policy suggest", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	since := fs.Duration("since", 720*time.Hour, "the window: decisions made this long ago or since")
	min := fs.Int("min", 5, "the allows a suggestion needs")
	log := fs.String("log", "", "read this exported audit log (countersign audit export) instead of the server's")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || *since <= 0 || *min < 1 {
		fmt.Fprintf(env.stderr, "usage: countersign %s (--since positive, --min at least 1)\n", suggestUsage)
		return cliExitUsage
	}
	src := fileSource(*log)
	if *log == "" {
		if o.token == "" {
			o.token = env.getenv("COUNTERSIGN_TOKEN")
		}
		c, err := cli.New(o.url, o.token, env.http)
		if err != nil {
			fmt.Fprintf(env.stderr, "countersign policy suggest: %v\n", err)
			return cliExitUsage
		}
		src = serverSource(ctx, c)
	}
	from := time.Now().Add(-*since)
	ss, err := replay.Suggest(src, from, time.Time{}, *min)
	if err == nil && o.json {
		err = json.NewEncoder(env.stdout).Encode(map[string]any{"since": from.UTC(), "min": *min, "suggestions": orEmpty(ss)})
	} else if err == nil {
		err = replay.WriteSuggestions(env.stdout, ss, from, *min)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign policy suggest: %v\n", err)
		return cliExitRefused
	}
	return cliExitOK
}

func orEmpty(ss []replay.Suggestion) []replay.Suggestion {
	if ss == nil {
		return []replay.Suggestion{}
	}
	return ss
}

// serverSource streams the caller's tenant's log from GET /v1/audit.
func serverSource(ctx context.Context, c *cli.Client) replay.Source {
	return func(fn func([]byte) error) error {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(c.ExportAudit(ctx, 0, pw)) }()
		defer pr.Close()
		return eachLine(pr, fn)
	}
}
