package inbox_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestInboxRoutesAndHeaders: the page at "/" and its assets carry the
// security headers and their content types; unknown paths stay 404, and
// unknown /v1 paths keep the API's problem+json.
func TestInboxRoutesAndHeaders(t *testing.T) {
	srv := servertest.Start(t)
	cases := []struct{ path, ctype string }{
		{"/", "text/html; charset=utf-8"},
		{"/inbox/app.js", "text/javascript; charset=utf-8"},
		{"/inbox/text.js", "text/javascript; charset=utf-8"},
		{"/inbox/inbox.css", "text/css; charset=utf-8"},
		{"/inbox/icon.svg", "image/svg+xml"},
		{"/inbox/req_01JC0000000000000000000000", "text/html; charset=utf-8"}, // a request's own address
		{"/inbox/policy", "text/html; charset=utf-8"},                         // the admins' policy replay
	}
	for _, c := range cases {
		resp, _ := get(t, srv.URL+c.path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", c.path, resp.StatusCode)
		}
		if got := resp.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		checkSecurityHeaders(t, c.path, resp.Header)
	}
	for _, p := range []string{"/inbox/index.html", "/inbox/", "/inbox/nope.js", "/inbox/../go.mod", "/index.html",
		"/inbox/req_", "/inbox/req_01jc0000000000000000000000", "/inbox/grt_01JC0000000000000000000000", "/inbox/req_01JC0000000000000000000000/x", "/inbox/policy/", "/inbox/policy.html"} {
		if resp, _ := get(t, srv.URL+p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	resp, body := get(t, srv.URL+"/v1/nope")
	var p struct{ Error string }
	_ = json.Unmarshal([]byte(body), &p)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" || p.Error != "NotFound" {
		t.Errorf("GET /v1/nope: %d %s %s, want the API's 404 problem", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func checkSecurityHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			directives[f[0]] = strings.Join(f[1:], " ")
		}
	}
	want := map[string]string{
		"default-src": "'none'", "script-src": "'self'", "frame-ancestors": "'none'",
		"base-uri": "'none'", "require-trusted-types-for": "'script'",
	}
	for k, v := range want {
		if directives[k] != v {
			t.Errorf("GET %s: CSP %s = %q, want %q (CSP %q)", path, k, directives[k], v, csp)
		}
	}
	if strings.Contains(csp, "unsafe-") {
		t.Errorf("GET %s: CSP allows something unsafe: %q", path, csp)
	}
	for k, v := range map[string]string{
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
		"Cross-Origin-Opener-Policy": "same-origin",
	} {
		if got := h.Get(k); got != v {
			t.Errorf("GET %s: %s = %q, want %q", path, k, got, v)
		}
	}
}

// TestInboxAssetsUseNoHTMLSinks: no asset parses strings as markup or
// code, and the page has no inline script or style. (Trusted Types in the
// CSP make such a sink throw in the browser too; this says where.)
func TestInboxAssetsUseNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['"]on|\.srcdoc|createContextualFragment|DOMParser`)
	inline := regexp.MustCompile(`<script(?:\s+[^>]*)?>[^<\s]|<style|\son[a-z]+=|style=|javascript:`)
	err := filepath.WalkDir("assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if m := sinks.Find(b); m != nil {
			t.Errorf("%s uses %q: data must reach the page as text only", p, m)
		}
		if strings.HasSuffix(p, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s has inline code %q: the CSP forbids it", p, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
