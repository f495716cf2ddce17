package app_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/links"
)

const linkKey = "the decision links' test key"

// linksFor submits req and returns the decision links its request.created
// webhook carried, as paths on srv.
func linksFor(t *testing.T, srv *servertest.Server, rc *receiver, req map[string]any) (r record, approve, deny string) {
	t.Helper()
	if code := newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", req, nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) >= 1 }, "request.created delivered")
	var data struct {
		Links struct {
			ApproveURL string `json:"approve_url"`
			DenyURL    string `json:"deny_url"`
		} `json:"links"`
	}
	_ = json.Unmarshal(rc.of(r.ID)[0].Data, &data)
	path := func(u string) string { return strings.TrimPrefix(u, "https://approvals.example.com") }
	return r, path(data.Links.ApproveURL), path(data.Links.DenyURL)
}

func page(t *testing.T, method, url string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func startLinks(t *testing.T) (*servertest.Server, *receiver) {
	rc := newReceiver(t, nil)
	return startHooks(t, rc, hookTenant(linksTop, "", hookLine(rc.srv.URL, "cloudevents", "request.created"))), rc
}

// GET shows the exact call and never decides, however often it is
// opened: HTML, bidi and zero-width characters shown as escaped text,
// look-alike words marked; the form's POST decides once; a second POST
// changes nothing.
func TestDecisionLinkGetNeverDecidesPostOnce(t *testing.T) {
	srv, rc := startLinks(t)
	req := refund(1)
	req["arguments"] = map[string]any{"note": "<script>alert(1)</script><img src=x onerror=alert(2)>", "rtl": "abc\u202edef\u200b",
		"payee": "p\u0430ypal", "site": "раураӏ.com"}
	req["reason"] = "<b>trust me</b> pay раураӏ.com\u202e"
	r, approve, _ := linksFor(t, srv, rc, req)
	for i := 0; i < 2; i++ {
		code, body, h := page(t, "GET", srv.URL+approve)
		if code != 200 || !strings.Contains(body, `<form method="post">`) || !strings.Contains(body, "issue_refund") {
			t.Fatalf("GET %d: %d %s", i, code, body)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img") || strings.Contains(body, "<b>trust") ||
			strings.Contains(body, "\u202e") || strings.Contains(body, "\u200b") || !strings.Contains(body, `\u202E`) || !strings.Contains(body, `\u200B`) {
			t.Fatalf("the page does not show the data as escaped text: %s", body)
		}
		if strings.Count(body, "⚠раураӏ") != 2 || !strings.Contains(body, "⚠p\u0430ypal") {
			t.Fatalf("the page does not mark the look-alikes: %s", body)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
			h.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("headers = %v", h)
		}
		if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 0 {
			t.Fatalf("GET %d decided: %+v", i, got)
		}
		_, style, _ := strings.Cut(body, "<style>")
		style, _, _ = strings.Cut(style, "</style>")
		sum := sha256.Sum256([]byte(style))
		if !strings.Contains(h.Get("Content-Security-Policy"), "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
			t.Errorf("the CSP does not allow the page's own style")
		}
	}
	if code, body, _ := page(t, "POST", srv.URL+approve); code != 200 || !strings.Contains(body, "approved by person u-1") {
		t.Fatalf("POST: %d %s", code, body)
	}
	if got := getRecord(t, srv, r.ID); got.Status != "approved" || got.Decision.By.ID != "u-1" || got.Revision != 1 {
		t.Fatalf("after POST: %+v", got)
	}
	if code, body, _ := page(t, "POST", srv.URL+approve); code != 409 || !strings.Contains(body, "already used") {
		t.Fatalf("second POST: %d %s", code, body)
	}
	if got := getRecord(t, srv, r.ID); got.Revision != 1 {
		t.Fatalf("a second POST changed the request: %+v", got)
	}
	if v := metric(t, srv.URL, `countersign_decision_link_uses_total{outcome="shown"}`); v != 2 {
		t.Errorf("links shown = %v, want 2", v)
	}
}

// Forged, malformed, other people's and expired links change nothing and
// say why.
func TestDecisionLinkRefusals(t *testing.T) {
	srv, rc := startLinks(t)
	r, approve, deny := linksFor(t, srv, rc, refund(1))
	token := strings.TrimPrefix(approve, "/d/")
	deadline := time.Now().Add(time.Hour)
	claim := links.Claim{Tenant: "demo", Request: domain.RequestID(r.ID), Revision: 0, Person: "u-2", Decision: links.Approve, Deadline: deadline}
	flipped := []byte(token)
	flipped[len(flipped)/2] ^= 1
	cases := []struct {
		name, path string
		code       int
		says       string
	}{
		{"forged", "/d/" + links.Mint([]byte("another key"), claim), 403, "not made by this server"},
		{"tampered", "/d/" + string(flipped), 0, "Nothing was changed"},
		{"malformed", "/d/not-a-token", 400, "not a complete decision link"},
		{"truncated", "/d/" + token[:len(token)-3], 0, "Nothing was changed"},
		{"another person", "/d/" + links.Mint([]byte(linkKey), claim), 0, "Nothing was changed"},
	}
	for _, c := range cases {
		for _, method := range []string{"GET", "POST"} {
			code, body, _ := page(t, method, srv.URL+c.path)
			if (c.code != 0 && code != c.code) || code == 200 || !strings.Contains(body, c.says) {
				t.Errorf("%s %s: %d %s", method, c.name, code, body)
			}
		}
		if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 0 {
			t.Fatalf("%s changed the request: %+v", c.name, got)
		}
	}
	// Deny link of a request whose deadline passes before the POST.
	short := refund(2)
	short["timeout"] = "1s"
	r2, _, deny2 := linksFor(t, srv, rc, short)
	testutil.Eventually(t, 10*time.Second, func() bool { return getRecord(t, srv, r2.ID).Status == "expired" }, "the request expires")
	if code, body, _ := page(t, "POST", srv.URL+deny2); code != 410 || !strings.Contains(body, "no decision was made in time") {
		t.Fatalf("POST after the deadline: %d %s", code, body)
	}
	if got := getRecord(t, srv, r2.ID); got.Status != "expired" || got.Decision.By.Kind != "deadline" {
		t.Fatalf("after the late POST: %+v", got)
	}
	_ = deny
}

// A decision link is judged by the server's clock, the one its timers go
// by: stepped past the request's deadline, the link says it expired
// (410) although the wall clock has not reached that deadline.
func TestDecisionLinkExpiresOnTheServersClock(t *testing.T) {
	rc := newReceiver(t, nil)
	t.Setenv("CS_TEST_HOOK_SECRET", hookSecret)
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithNotify(testTuning(t, rc)),
		servertest.WithConfig(hookTenant(linksTop, "", hookLine(rc.srv.URL, "cloudevents", "request.created"))))
	_, approve, _ := linksFor(t, srv, rc, refund(1)) // its deadline an hour away
	clock.Set(time.Now().Add(2 * time.Hour))
	if code, body, _ := page(t, "GET", srv.URL+approve); code != 410 || !strings.Contains(body, "no decision was made in time") {
		t.Fatalf("GET two hours later on the server's clock: %d %s", code, body)
	}
}
