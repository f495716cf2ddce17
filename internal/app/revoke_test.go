package app_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/httpapi/rpc"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// revokeWithin is the test's deadline for a removed token to lose what it
// holds. The contract is 1 s (SPEC §10); 3 s keeps the test out of the
// way of a loaded machine.
const revokeWithin = 3 * time.Second

// liveLostPerson is liveFull without live-person-1's token: u-1 stays a
// member, with no token.
var liveLostPerson = strings.Replace(liveFull,
	`      - {token: live-person-1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}`+"\n", "", 1)

func bearerGet(t *testing.T, url, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// A token removed by a reload in one process loses what it holds in
// another process within a second (SPEC §10): its held long-poll answers
// 401 Unauthenticated, its event stream closes and delivers nothing about
// a request made after the removal (the admin's stream on the same process
// does), and its /v1/rpc WebSocket closes with 4401.
func TestReloadRemovedTokenEndsWhatItHolds(t *testing.T) {
	url := startExternalNATS(t)
	path1, path2 := filepath.Join(t.TempDir(), "countersign.yaml"), filepath.Join(t.TempDir(), "countersign.yaml")
	writeConfig(t, path1, liveFull)
	writeConfig(t, path2, liveFull)
	p1 := startLiveRole(t, url, path1, "api", "deciders")
	p2 := startLiveRole(t, url, path2, "api")
	base2 := "http://" + p2.Addr()

	var pending record
	if code := newClient(base2, "live-a").do(t, "POST", "/v1/requests", refund(1), nil, &pending); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	awaitApprover(t, newClient(base2, "live-person-1"), pending.ID)
	hc := &http.Client{}
	poll := servertest.HoldRequest(t, hc, bearerGet(t, base2+"/v1/requests/"+pending.ID+"?wait=60s", "live-person-1"))
	testutil.Eventually(t, 10*time.Second, func() bool { return metric(t, base2, "countersign_longpolls_waiting") >= 1 },
		"the long-poll to be held")
	stream := servertest.HoldSSE(t, hc, bearerGet(t, base2+"/v1/events", "live-person-1"))
	admin := servertest.HoldSSE(t, hc, bearerGet(t, base2+"/v1/events", "live-admin"))
	ws := servertest.API{T: t, URL: base2}.HoldRPC("live-person-1")

	writeConfig(t, path1, liveLostPerson) // p1 stores it; p2 has only the bucket
	if err := reload(t, p1); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	var after record
	if code := newClient(base2, "live-a").do(t, "POST", "/v1/requests", refund(2), nil, &after); code != 201 {
		t.Fatalf("submit after the removal: %d", code)
	}

	select {
	case a := <-poll:
		if a.Err != nil || a.Status != http.StatusUnauthorized || !strings.Contains(a.Body, `"error":"Unauthenticated"`) {
			t.Errorf("the held long-poll answered %d %v %s, want 401 Unauthenticated", a.Status, a.Err, a.Body)
		}
	case <-time.After(revokeWithin):
		t.Errorf("the held long-poll is still open %v after the removal", revokeWithin)
	}
	for open := true; open; {
		select {
		case d, ok := <-stream.Data:
			if open = ok; ok && strings.Contains(d, after.ID) {
				t.Errorf("the removed token's stream delivered the later request: %s", d)
			}
		case <-time.After(revokeWithin):
			t.Fatalf("the removed token's event stream is still open %v after the removal", revokeWithin)
		}
	}
	select {
	case code := <-ws:
		if code != rpc.CloseRevoked {
			t.Errorf("the removed token's WebSocket closed with %d, want %d", code, rpc.CloseRevoked)
		}
	case <-time.After(revokeWithin):
		t.Errorf("the removed token's WebSocket is still open %v after the removal", revokeWithin)
	}
	t.Logf("all ended %v after the removal (contract: 1s)", time.Since(removed))
	awaitData(t, admin.Data, after.ID, "the admin's stream on the same process")
}

// awaitData waits for a data line of stream that mentions id.
func awaitData(t *testing.T, stream <-chan string, id, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case d, ok := <-stream:
			if !ok {
				t.Fatalf("%s ended", what)
			}
			if strings.Contains(d, id) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("%s delivered nothing about %s", what, id)
		}
	}
}
