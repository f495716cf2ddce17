package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/cli"
	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

const loginYAML = `public_url: %s
link_secret_env: LOGIN_TEST_LINK_SECRET
oidc: {issuer: %s, client_id: %s, client_secret_env: LOGIN_TEST_OIDC_SECRET}
tenants:
  - id: acme
    members:
      - {id: u-1, email: %s, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
`

// startLoginServer runs countersign with an in-process provider.
func startLoginServer(t *testing.T) (*servertest.Server, *oidctest.Provider) {
	t.Helper()
	idp := oidctest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOGIN_TEST_OIDC_SECRET", oidctest.ClientSecret)
	t.Setenv("LOGIN_TEST_LINK_SECRET", "link-secret-of-the-login-tests")
	yaml := fmt.Sprintf(loginYAML, "http://"+ln.Addr().String(), idp.Issuer, oidctest.ClientID, oidctest.Email)
	return servertest.Start(t, servertest.WithConfig(yaml), servertest.WithListener(ln)), idp
}

var userCode = regexp.MustCompile(`shows the code (\S+)`)

// countersign login signs in through the provider's device flow, keeps
// the session at mode 0600 in the config directory, and the people's CLI
// then works without a token.
func TestLoginDeviceFlow(t *testing.T) {
	srv, idp := startLoginServer(t)
	dir := t.TempDir()
	rd, wr := io.Pipe()
	var errb strings.Builder
	env := cliEnv{stdout: wr, stderr: &errb, getenv: func(string) string { return "" },
		configDir: func() (string, error) { return dir, nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- login(ctx, []string{"--url", srv.URL}, env); wr.Close() }()
	lines := bufio.NewScanner(rd)
	var code string
	for code == "" && lines.Scan() {
		if m := userCode.FindStringSubmatch(lines.Text()); m != nil {
			code = m[1]
		}
	}
	if code == "" {
		t.Fatalf("login printed no user code; stderr %q", errb.String())
	}
	idp.Approve(t, code)
	go func() { _, _ = io.Copy(io.Discard, rd) }()
	if got := <-done; got != 0 {
		t.Fatalf("login exit %d, stderr %q", got, errb.String())
	}
	path := cli.SessionPath(dir)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file %s: %v, mode %v; want 0600", path, err, fi)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("session directory mode %v, want 0700", di.Mode().Perm())
	}
	var body = `{"tool":"deploy","arguments":{"n":1}}`
	cliHTTP(t, srv, "POST", "/v1/requests", "tok-main", body, &map[string]any{})
	var out strings.Builder
	env = cliEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, configDir: func() (string, error) { return dir, nil }}
	if got := runCLI(ctx, "pending", []string{"--url", srv.URL}, env); got != 0 || !strings.Contains(out.String(), "deploy") {
		t.Fatalf("pending with the kept session: exit %d, out %q, stderr %q", got, out.String(), errb.String())
	}
}

// A person who denies the device sign-in at the provider gets exit 1 and
// no kept session.
func TestLoginDeniedKeepsNothing(t *testing.T) {
	srv, idp := startLoginServer(t)
	dir := t.TempDir()
	rd, wr := io.Pipe()
	var errb strings.Builder
	env := cliEnv{stdout: wr, stderr: &errb, getenv: func(string) string { return "" },
		configDir: func() (string, error) { return dir, nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- login(ctx, []string{"--url", srv.URL}, env); wr.Close() }()
	lines := bufio.NewScanner(rd)
	var code string
	for code == "" && lines.Scan() {
		if m := userCode.FindStringSubmatch(lines.Text()); m != nil {
			code = m[1]
		}
	}
	if err := idp.Storage.DenyDeviceAuthorization(ctx, code); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, rd) }()
	if got := <-done; got != 1 || !strings.Contains(errb.String(), "sign-in refused: access_denied") {
		t.Fatalf("denied login: exit %d, stderr %q; want 1", got, errb.String())
	}
	if _, err := os.Stat(cli.SessionPath(dir)); !os.IsNotExist(err) {
		t.Fatalf("a session file was kept: %v", err)
	}
}
