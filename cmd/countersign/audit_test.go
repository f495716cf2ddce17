package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// auditRun runs audit export or verify and returns the exit code and
// what it printed.
func auditRun(t *testing.T, url string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
		return map[string]string{"COUNTERSIGN_URL": url, "COUNTERSIGN_TOKEN": "dev-admin"}[k]
	}}
	if args[0] == "export" {
		return auditExport(context.Background(), args[1:], env), out.String() + errb.String()
	}
	return auditVerify(args[1:], env), out.String() + errb.String()
}

func auditFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// export, verify, flip a byte, and prove a checkpoint against the file.
func TestAuditExportAndVerify(t *testing.T) {
	yaml := config.DemoYAML + "      - {token: dev-admin, principal: \"service:ops\", scopes: [admin]}\n"
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	for range 3 {
		cliSubmit(t, srv, servertest.TokenMain, "")
	}
	var log string
	testutil.Eventually(t, 20*time.Second, func() bool {
		code, out := auditRun(t, srv.URL, "export")
		log = out
		return code == 0 && strings.Count(out, "\n") >= 3
	}, "three entries exported")
	file := auditFile(t, "audit.jsonl", []byte(log))
	if code, out := auditRun(t, srv.URL, "verify", file); code != 0 || !strings.Contains(out, "entries checked") {
		t.Fatalf("verify: exit %d, %s", code, out)
	}
	code, rest := auditRun(t, srv.URL, "export", "--after", "1")
	if code != 0 || !strings.HasSuffix(log, rest) || strings.Count(rest, "\n") != strings.Count(log, "\n")-1 {
		t.Errorf("export --after 1: exit %d, %q; want the export less its first line", code, rest)
	}
	flipped := []byte(log)
	flipped[strings.Index(log, "\n")+20] ^= 1
	if code, out := auditRun(t, srv.URL, "verify", auditFile(t, "flipped.jsonl", flipped)); code != 1 || !strings.Contains(out, "entry 2 ") {
		t.Errorf("a flipped byte in entry 2: exit %d, %s; want exit 1 naming entry 2", code, out)
	}
	// A checkpoint of the first two entries, its key, and the file.
	skey, vkey, _ := audit.NewKey()
	chain, _ := audit.VerifyLog(strings.NewReader(strings.Join(strings.SplitAfter(log, "\n")[:2], "")))
	root, _ := chain.Tree().Root(2)
	s, _ := audit.NewSigner(skey)
	note, err := s.Sign(audit.Checkpoint{Origin: audit.Origin("demo"), Size: 2, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	cp, key := auditFile(t, "cp", note), auditFile(t, "key", []byte(vkey+"\n"))
	if code, out := auditRun(t, srv.URL, "verify", "--checkpoint", cp, "--key", key, file); code != 0 {
		t.Errorf("verify --checkpoint: exit %d, %s", code, out)
	}
	_, otherV, _ := audit.NewKey()
	if code, _ := auditRun(t, srv.URL, "verify", "--checkpoint", cp, "--key", otherV, file); code != 1 {
		t.Errorf("a checkpoint checked with another key: exit %d; want 1", code)
	}
	if code, _ := auditRun(t, srv.URL, "verify", "--checkpoint", cp, file); code != 2 {
		t.Errorf("--checkpoint without --key: exit %d; want 2", code)
	}
}
