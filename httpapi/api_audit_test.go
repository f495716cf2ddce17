package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"golang.org/x/mod/sumdb/tlog"
)

// exportAudit reads GET /v1/audit as admin and verifies it.
func exportAudit(t *testing.T, c *client, query string) ([]byte, *audit.Chain) {
	t.Helper()
	r := c.do("GET", "/v1/audit"+query, nil).want(t, "audit", http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/jsonl" {
		t.Errorf("Content-Type %q; want application/jsonl", ct)
	}
	chain, err := audit.VerifyLog(bytes.NewReader(r.raw))
	if query == "" && err != nil {
		t.Fatalf("the export does not verify: %v\n%s", err, r.raw)
	}
	return r.raw, chain
}

// A decided request is in the log, which verifies, resumes after a seq,
// and matches the signed checkpoint and its proofs.
func TestAuditLogOverHTTP(t *testing.T) {
	url := startAcme(t)
	admin, person := newClient(t, url, tokAdmin), newClient(t, url, tokPerson)
	rec := newClient(t, url, tokMain).pending()
	person.answer(rec, "allow", "once").want(t, "answer", http.StatusOK)
	id := str(rec["id"])
	var log []byte
	var chain *audit.Chain
	eventually(t, 20*time.Second, "the request's created and decided entries", func() bool {
		log, chain = exportAudit(t, admin, "")
		return bytes.Count(log, []byte(`"subject":"`+id+`"`)) == 2
	})
	if !bytes.Contains(log, []byte(`"actor":{"id":"u-1","kind":"person"}`)) {
		t.Errorf("the decision's actor is not the person:\n%s", log)
	}
	// The writer observes each entry's lag once its batch is stored.
	eventually(t, 10*time.Second, "countersign_audit_lag_seconds_count of the request's two entries", func() bool {
		metrics := admin.do("GET", "/metrics", nil).want(t, "metrics", http.StatusOK).raw
		var lagged float64
		for _, line := range strings.Split(string(metrics), "\n") {
			if v, ok := strings.CutPrefix(line, "countersign_audit_lag_seconds_count "); ok {
				_, _ = fmt.Sscan(v, &lagged)
			}
		}
		return lagged >= 2
	})
	n := int64(chain.Len())
	rest := admin.do("GET", "/v1/audit?after=1", nil).want(t, "after=1", http.StatusOK).raw
	if got := bytes.Count(rest, []byte("\n")); int64(got) != n-1 || !bytes.HasSuffix(log, rest) {
		t.Errorf("after=1: %d lines; want the last %d of the export", got, n-1)
	}
	vkey := strings.TrimSpace(string(admin.do("GET", "/v1/audit/key", nil).want(t, "key", 200).raw))
	cp, err := audit.OpenCheckpoint(admin.do("GET", "/v1/audit/checkpoint", nil).want(t, "checkpoint", 200).raw, vkey)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Origin != "countersign/acme/audit" || cp.Size < n {
		t.Fatalf("checkpoint %+v; want acme's, at least %d entries", cp, n)
	}
	log, chain = exportAudit(t, admin, "")
	if err := audit.CheckExtends(chain, cp, cp.Origin); err != nil {
		t.Fatal(err)
	}
	oldRoot, _ := chain.Tree().Root(1)
	p := admin.do("GET", "/v1/audit/proof?old=1&size="+itoa(cp.Size), nil).want(t, "consistency proof", 200)
	if err := tlog.CheckTree(proofHashes(t, p.body["proof"]), cp.Size, cp.Root, 1, oldRoot); err != nil {
		t.Errorf("consistency proof 1→%d: %v", cp.Size, err)
	}
	p = admin.do("GET", "/v1/audit/proof?entry=1&size="+itoa(cp.Size), nil).want(t, "inclusion proof", 200)
	first, _, _ := bytes.Cut(log, []byte("\n"))
	if err := tlog.CheckRecord(proofHashes(t, p.body["proof"]), cp.Size, cp.Root, 0, tlog.RecordHash(first)); err != nil || num(p.body["entry"]) != 1 {
		t.Errorf("inclusion proof of entry 1: %v, %v", err, p.body)
	}
}

func TestAuditRefusals(t *testing.T) {
	url := startAcme(t)
	admin := newClient(t, url, tokAdmin)
	for _, tc := range []struct{ path, field string }{
		{"/v1/audit?after=-1", "after"},
		{"/v1/audit?after=01", "after"},
		{"/v1/audit?until=yesterday", "until"},
		{"/v1/audit/proof?size=3", "old"},
		{"/v1/audit/proof?old=1&entry=1&size=3", "old"},
		{"/v1/audit/proof?old=1", "size"},
		{"/v1/audit/proof?old=0&size=3", "old"},
		{"/v1/audit/proof?old=4&size=3", "old"},
		{"/v1/audit/proof?entry=x&size=3", "entry"},
		{"/v1/audit/proof?old=1&size=1000000", "size"},
	} {
		admin.do("GET", tc.path, nil).wantProblem(t, tc.path, 400, "InvalidRequest", tc.field)
	}
	for _, path := range []string{"/v1/audit", "/v1/audit/checkpoint", "/v1/audit/key", "/v1/audit/proof?old=1&size=1"} {
		newClient(t, url, tokPerson).do("GET", path, nil).wantProblem(t, path+" without admin", 403, "Forbidden", "")
		newClient(t, url, "").do("GET", path, nil).wantProblem(t, path+" without a token", 401, "Unauthenticated", "")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func proofHashes(t *testing.T, v any) []tlog.Hash {
	t.Helper()
	var out []tlog.Hash
	for _, s := range v.([]any) {
		b, err := base64.StdEncoding.DecodeString(s.(string))
		if err != nil || len(b) != tlog.HashSize {
			t.Fatalf("proof hash %v", s)
		}
		out = append(out, tlog.Hash(b))
	}
	return out
}

// audit_signing_key_env names the checkpoints' key; the checkpoint
// verifies with its verifier key.
func TestAuditSigningKeyFromEnv(t *testing.T) {
	skey, vkey, err := audit.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_AUDIT_KEY", skey)
	url := servertest.Start(t, servertest.WithConfig("audit_signing_key_env: TEST_AUDIT_KEY\n"+acmeYAML)).URL
	admin := newClient(t, url, tokAdmin)
	if got := strings.TrimSpace(string(admin.do("GET", "/v1/audit/key", nil).want(t, "key", 200).raw)); got != vkey {
		t.Fatalf("key %q; want the configured key's %q", got, vkey)
	}
	if _, err := audit.OpenCheckpoint(admin.do("GET", "/v1/audit/checkpoint", nil).want(t, "checkpoint", 200).raw, vkey); err != nil {
		t.Fatal(err)
	}
}
