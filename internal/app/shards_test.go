package app_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
)

// tenantsOnShards returns k tenant ids, the i-th in request shard i of k.
func tenantsOnShards(k int) []string {
	ids := make([]string, k)
	for n, found := 0, 0; found < k; n++ {
		id := fmt.Sprintf("t%d", n)
		if s := kvstate.ShardOf(domain.TenantID(id), k); ids[s] == "" {
			ids[s], found = id, found+1
		}
	}
	return ids
}

func shardedConfig(shards int, ids []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "request_shards: %d\ntenants:\n", shards)
	for _, id := range ids {
		fmt.Fprintf(&b, `  - id: %[1]s
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: %[1]s-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: %[1]s-agent, principal: "agent:agt_a", scopes: [requests:write]},
             {token: %[1]s-admin, principal: "service:admin", scopes: [admin]}]
`, id)
	}
	return b.String()
}

// With request_shards 3, each tenant's requests, idempotency keys and
// events live in its own shard's buckets, and everything a tenant does
// works as with one shard: submit and its retry, the inbox, answers,
// the long-poll, the audit log, a restart. Changing K afterwards is
// refused.
func TestShardedRequests(t *testing.T) {
	ids := tenantsOnShards(3)
	srv := servertest.Start(t, servertest.WithConfig(shardedConfig(3, ids)))
	js := srv.App.Broker.JS
	ctx := context.Background()
	pending := map[string]string{} // tenant → a request left pending over the restart
	first := map[string]string{}   // tenant → its first request
	for i, id := range ids {
		agent, person := newClient(srv.URL, id+"-agent"), newClient(srv.URL, id+"-person")
		key := map[string]string{"Idempotency-Key": "k-1"}
		var r, again record
		if code := agent.do(t, "POST", "/v1/requests", refund(i), key, &r); code != 201 {
			t.Fatalf("%s: submit: %d", id, code)
		}
		if code := agent.do(t, "POST", "/v1/requests", refund(i), key, &again); code != 200 || again.ID != r.ID {
			t.Fatalf("%s: the retry: %d %s, want 200 and %s", id, code, again.ID, r.ID)
		}
		// Stored in the tenant's shard, and in no other.
		for s := range 3 {
			bucket := kvstate.RequestBucket(s)
			st, err := js.Stream(ctx, kvstate.StreamOf(bucket))
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.GetLastMsgForSubject(ctx, "$KV."+bucket+"."+id+"."+r.ID)
			if found := err == nil; found != (s == i) {
				t.Fatalf("%s (shard %d): request %s in %s: %v", id, i, r.ID, bucket, err)
			}
			idem, err := js.Stream(ctx, kvstate.StreamOf(kvstate.IdempotencyBucket(s)))
			if err != nil {
				t.Fatal(err)
			}
			info, err := idem.Info(ctx, jetstream.WithSubjectFilter("$KV."+kvstate.IdempotencyBucket(s)+"."+id+".>"))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(info.State.Subjects); (n > 0) != (s == i) {
				t.Fatalf("%s (shard %d): %d idempotency keys in shard %d", id, i, n, s)
			}
		}
		first[id] = r.ID
		var list struct{ Items []record }
		if code := person.do(t, "GET", "/v1/requests", nil, nil, &list); code != 200 || len(list.Items) != 1 || list.Items[0].ID != r.ID {
			t.Fatalf("%s: inbox %d %+v, want %s alone", id, code, list.Items, r.ID)
		}
		if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow", "scope": "lifetime"}, nil, nil); code != 200 {
			t.Fatalf("%s: answer: %d", id, code)
		}
		// The grant is derived from the change (the outbox reads every shard).
		testutil.Eventually(t, 10*time.Second, func() bool {
			var grants struct{ Items []struct{ ID string } }
			return person.do(t, "GET", "/v1/grants", nil, nil, &grants) == 200 && len(grants.Items) == 1
		}, id+"'s grant")
		var got record
		if code := agent.do(t, "GET", "/v1/requests/"+r.ID+"?wait=5s", nil, nil, &got); code != 200 || got.Status != "approved" {
			t.Fatalf("%s: the agent sees %d %s, want approved", id, code, got.Status)
		}
		var open record
		email := map[string]any{"tool": "send_email", "arguments": map[string]any{"to": "a@example.com"}, "timeout": "1h"}
		if code := agent.do(t, "POST", "/v1/requests", email, nil, &open); code != 201 || open.Status != "pending" {
			t.Fatalf("%s: second submit: %d", id, code)
		}
		pending[id] = open.ID
		// The outbox republishes the tenant's changes as CloudEvents.
		testutil.Eventually(t, 10*time.Second, func() bool {
			st, err := js.Stream(ctx, events.EventsStream)
			if err != nil {
				return false
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(events.EventSubject(domain.TenantID(id), events.TypeRequestCreated)))
			return err == nil && len(info.State.Subjects) > 0
		}, id+"'s CloudEvents")
		// The audit log has the tenant's entries, from its shard.
		testutil.Eventually(t, 10*time.Second, func() bool {
			return strings.Contains(auditOf(t, srv.URL, id+"-admin"), `"subject":"`+r.ID+`"`)
		}, id+"'s audit entries")
	}

	// The live protocol's log is the tenant's shard's stream.
	for _, id := range ids {
		res := srv.API(t).DialRPC(id+"-person").Call("view/page", map[string]any{"cursor": first[id] + ":0"})
		var got []string
		list, _ := res["events"].([]any)
		for _, e := range list {
			ev := e.(map[string]any)
			got = append(got, ev["method"].(string)+" "+ev["params"].(map[string]any)["approvalId"].(string))
		}
		want := []string{"approval/requested " + first[id], "approval/resolved " + first[id], "approval/requested " + pending[id]}
		if !slices.Equal(got, want) {
			t.Errorf("%s: view/page %v, want %v", id, got, want)
		}
	}

	srv.Restart(t)
	for _, id := range ids {
		person := newClient(srv.URL, id+"-person")
		var list struct{ Items []record }
		code := person.do(t, "GET", "/v1/requests", nil, nil, &list)
		if found := slices.IndexFunc(list.Items, func(r record) bool { return r.ID == pending[id] && r.Status == "pending" }); code != 200 || len(list.Items) != 2 || found < 0 {
			t.Fatalf("%s after the restart: inbox %d %+v, want %s pending and the approved one", id, code, list.Items, pending[id])
		}
		if code := person.do(t, "POST", "/v1/requests/"+pending[id], map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
			t.Fatalf("%s after the restart: answer: %d", id, code)
		}
	}

	// Another K on these requests is refused, naming the key.
	srv.Stop()
	for _, k := range []int{1, 2, 4} {
		cfg, err := config.Parse([]byte(shardedConfig(k, ids)))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DataDir, cfg.NATSListen, cfg.Listen = srv.Dir, "off", "127.0.0.1:0"
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		a, err := launch(sctx, app.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		cancel()
		if err == nil {
			_ = a.Shutdown(ctx)
			t.Fatalf("request_shards %d over 3 shards of requests: started", k)
		}
		if !strings.Contains(err.Error(), "request_shards is "+fmt.Sprint(k)) || !strings.Contains(err.Error(), "stored in 3 shards") {
			t.Fatalf("request_shards %d: %v, want the layout named", k, err)
		}
	}
}

// auditOf reads a tenant's audit log (JSON Lines).
func auditOf(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/audit", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	return b.String()
}
