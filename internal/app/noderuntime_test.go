package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// The Node runtime of examples/node-runtime (the npm "nats" client, its
// own token, NATS only) takes agt_main's reviews: a small refund it
// endorses up to the person, a large one it denies. .ci/run installs its
// package; without node or the package, the test says so and skips.
func TestNodeRuntimeDecidesOverTheBus(t *testing.T) {
	dir, err := filepath.Abs("../../examples/node-runtime")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "nats")); err != nil {
		t.Skip("run npm ci in examples/node-runtime first")
	}
	srv := servertest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "runtime.js")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	cmd.Env = append(os.Environ(), "NATS_URL="+srv.App.Broker.ClientURL(), "COUNTERSIGN_TOKEN="+servertest.TokenMain,
		"TENANT=demo", "AGENT=agt_main")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait(); t.Logf("runtime output:\n%s", out.String()) }()

	api := srv.API(t)
	small := submitRefund(t, api, 4900)
	large := submitRefund(t, api, 990000)
	testutil.Eventually(t, 30*time.Second, func() bool {
		return api.Get(servertest.TokenProgrammer, large).Status == domain.StatusDenied &&
			api.Get(servertest.TokenProgrammer, small).Approver.ID == "u-1"
	}, "the Node runtime's answers")
	r := api.Get(servertest.TokenProgrammer, large)
	if r.Decision.By != (domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}) || !strings.Contains(r.Decision.Note, "Too large") {
		t.Fatalf("large refund decided by %+v (%q); want agt_main's deny", r.Decision.By, r.Decision.Note)
	}
	if e := api.Get(servertest.TokenProgrammer, small).Endorsements; len(e) != 1 || e[0].Agent != "agt_main" {
		t.Fatalf("small refund endorsements %+v; want agt_main's", e)
	}
}

func submitRefund(t *testing.T, api servertest.API, amount int) domain.RequestID {
	t.Helper()
	code, data := api.Do(http.MethodPost, "/v1/requests", servertest.TokenProgrammer, map[string]any{
		"tool": "issue_refund", "arguments": map[string]any{"payment_id": "payment_123", "amount": amount, "currency": "GBP"}})
	var r domain.Request
	if code != http.StatusCreated || json.Unmarshal(data, &r) != nil {
		t.Fatalf("submit: %d %s", code, data)
	}
	return r.ID
}
