package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// A registered subagent stored by an older version (review_timeout in
// integer nanoseconds) still loads, across a restart, and every answer
// shows its review_timeout as a duration string.
func TestOldAgentRecordLoads(t *testing.T) {
	srv := servertest.Start(t)
	sum := sha256.Sum256([]byte("tok-old-sub"))
	old := `{"id":"agt_old","tenant":"demo","member":"u-1","parent":"agt_programmer","role":"helper",` +
		`"review_timeout":90000000000,"registered":true,"token_sha256":"` + hex.EncodeToString(sum[:]) + `",` +
		`"scopes":["requests:write"],"created_at":"2026-01-02T03:04:05Z"}`
	ctx := context.Background()
	kv, err := srv.App.Broker.JS.KeyValue(ctx, kvstate.BucketAgents)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, kvstate.AgentKey("demo", "agt_old"), []byte(old)); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	api := srv.API(t)
	testutil.Eventually(t, 10*time.Second, func() bool {
		code, _ := api.Do(http.MethodGet, "/v1/requests", "tok-old-sub", nil)
		return code == http.StatusForbidden // known, and held to its scopes (requests:write only)
	}, "the old record's token authenticates")
	code, body := api.Do(http.MethodDelete, "/v1/agents/agt_old", servertest.TokenProgrammer, nil)
	if code != http.StatusOK {
		t.Fatalf("retire: %d %s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got["review_timeout"] != "1m30s" {
		t.Errorf("review_timeout answered as %#v in %s", got["review_timeout"], body)
	}
	kv, err = srv.App.Broker.JS.KeyValue(ctx, kvstate.BucketAgents) // the restarted server's
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, kvstate.AgentKey("demo", "agt_old"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(e.Value()), `"review_timeout":"1m30s"`) {
		t.Errorf("stored again as %s", e.Value())
	}
}
