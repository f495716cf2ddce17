package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

// A delivery's Standard Webhooks signature, checked in the test from the
// raw bytes the receiver got: webhook-id is the CloudEvent's id, and
// webhook-signature is exactly one "v1," and the base64 HMAC-SHA256,
// under the secret decoded from its whsec_ form, of
// "<webhook-id>.<webhook-timestamp>.<body>" — any other layout (another
// order, separator, encoding or key) fails.
func TestWebhookSignatureLayout(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := startHooks(t, rc, hookTenant("", "", hookLine(rc.srv.URL, "cloudevents", "request.created")))
	var r record
	if code := newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	rejected := func() []string {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return append([]string(nil), rc.bad...)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) == 1 || len(rejected()) > 0 }, "a delivery")
	if bad := rejected(); len(bad) > 0 {
		t.Fatalf("the receiver's verifier refused the signature: %v", bad)
	}
	d := rc.of(r.ID)[0]
	id, ts := d.Header.Get("webhook-id"), d.Header.Get("webhook-timestamp")
	if id == "" || id != d.ID {
		t.Fatalf("webhook-id %q, want the CloudEvent's id %q", id, d.ID)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(hookSecret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(d.Raw)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := d.Header.Values("webhook-signature"); len(got) != 1 || got[0] != want {
		t.Fatalf("webhook-signature %q, want exactly %q", got, want)
	}
}
