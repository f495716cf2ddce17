package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/notify"
)

// hookSecret is the receivers' Standard Webhooks secret, in its whsec_ form.
var hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a receiver's test secret, 32 byt"))

// verifyStandardWebhook checks a delivery the way a receiver does, written
// from the Standard Webhooks specification (not from the sender): the
// secret is base64 after "whsec_"; the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>"; webhook-signature is a
// space-separated list of "v1,<base64 HMAC-SHA256>", any of which may
// match; the timestamp must be within 5 minutes.
func verifyStandardWebhook(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return errors.New("timestamp outside the tolerance")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if ok && version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}

// delivered is one event a receiver accepted.
type delivered struct {
	ID, Type, Subject, Revision, ContentType string
	Data                                     json.RawMessage
	Raw                                      []byte
	Header                                   http.Header
}

// receiver is a local HTTPS webhook endpoint that verifies every POST
// and fails while told to.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []delivered
	failures int
	failing  func(failures int) bool // nil: never fails
	bad      []string                // deliveries whose signature did not verify
}

func newReceiver(t *testing.T, failing func(int) bool) *receiver {
	rc := &receiver{failing: failing}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := verifyStandardWebhook(hookSecret, r.Header, body); err != nil {
		rc.bad = append(rc.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if rc.failing != nil && rc.failing(rc.failures) {
		rc.failures++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var ce struct {
		ID, Type, Subject, Revision string
		Data                        json.RawMessage
	}
	_ = json.Unmarshal(body, &ce)
	rc.got = append(rc.got, delivered{ID: ce.ID, Type: ce.Type, Subject: ce.Subject, Revision: ce.Revision,
		ContentType: r.Header.Get("Content-Type"), Data: ce.Data, Raw: body, Header: r.Header.Clone()})
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) events() []delivered {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivered(nil), rc.got...)
}

func (rc *receiver) failed() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.failures
}

// of returns the deliveries about one request, in arrival order.
func (rc *receiver) of(id string) []delivered {
	var out []delivered
	for _, d := range rc.events() {
		if d.Subject == id {
			out = append(out, d)
		}
	}
	return out
}

// testTuning is quick backoff, and trust in the receivers' certificate
// (every httptest TLS server has the same one).
func testTuning(t *testing.T, rc *receiver) notify.Tuning {
	pool := x509.NewCertPool()
	pool.AddCert(rc.srv.Certificate())
	return notify.Tuning{Timeout: 2 * time.Second, BackoffBase: 30 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		LeaseTTL: 3 * time.Second, TLS: &tls.Config{RootCAs: pool}}
}

// hookTenant is a tenant with two members (u-1 decides agt_main's
// requests) and the given webhooks and extra top-level keys.
func hookTenant(top, tenantExtra, webhooks string) string {
	return top + `tenants:
  - id: demo
    members:
      - {id: u-1, policy: {allow: ["*"]}, slack_user_id: U0001}
      - {id: u-2, policy: {allow: ["*"]}, slack_user_id: U0002}
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: hook-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: hook-person-2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: hook-agent, principal: "agent:agt_main", scopes: [requests:write]}
` + tenantExtra + "    webhooks:\n" + webhooks
}

func hookLine(url, format, events string) string {
	s := fmt.Sprintf("      - {url: %q, secret_env: CS_TEST_HOOK_SECRET, format: %s", url, format)
	if events != "" {
		s += ", events: [" + events + "]"
	}
	return s + "}\n"
}

// metric reads one sample's value from /metrics (-1 if absent).
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}
