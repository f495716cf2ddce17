package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
)

// updatedHook is issue 33's finding: SPEC §9 lists request.updated, config
// check passed it, and serve refused it (notify had a list of its own).
// As a test's raw string it is in the corpus below.
const updatedHook = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    webhooks:
      - {url: "https://hooks.example.com/cs", secret_env: AGREE_HOOK_SECRET, events: [request.created, request.updated]}
`

// A listen address that is not host:port is the file's error, for
// config check as for serve (serve without --listen used to fail at
// net.Listen, after starting NATS, and check passed it).
const badListen = `listen: "8080"
tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
`

// repoRoot is the module's root, two levels above this package.
const repoRoot = "../.."

// config check and serve run one validation (SPEC §10): every config the
// repository holds — the demo, the docs' and README's full configs, the
// deploy examples, the config fuzz corpus and every config written in a
// test — gets the same verdict from `config check` as from serve's build
// (serveConfig and app.Start, on a real embedded NATS server and a real
// listener on port 0). Each runs twice: with every variable the config
// names set to a value of the shape its key takes, and with none set.
func TestConfigCheckAgreesWithServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server per config")
	}
	corpus := configCorpus(t)
	for what, want := range map[string]string{"updatedHook": updatedHook, "badListen": badListen} {
		if !slices.ContainsFunc(slices.Collect(maps.Values(corpus)), func(raw []byte) bool { return strings.Contains(string(raw), strings.TrimSpace(want)) }) {
			t.Errorf("the corpus lacks %s: its raw strings are not read from the test files", what)
		}
	}
	names := make([]string, 0, len(corpus))
	for n := range corpus {
		names = append(names, n)
	}
	sort.Strings(names)
	accepted := 0
	for _, name := range names {
		raw := corpus[name]
		vars := namedVars(raw)
		for _, withEnv := range []bool{true, false} {
			if !withEnv && len(vars) == 0 {
				continue
			}
			label := name
			if !withEnv {
				label += " (variables unset)"
			}
			t.Run(label, func(t *testing.T) {
				for _, v := range vars {
					if withEnv {
						t.Setenv(v.name, envValue(t, v.key))
					} else {
						t.Setenv(v.name, "")
					}
				}
				path := filepath.Join(t.TempDir(), "countersign.yaml")
				if err := os.WriteFile(path, raw, 0o600); err != nil {
					t.Fatal(err)
				}
				checkErr, checked := checkVerdict(path)
				serveErr := serveVerdict(t, path)
				if checked != (serveErr == nil) {
					t.Errorf("config check and serve disagree on %s:\n  config check: %s\n  serve: %v\n---\n%s", name, checkErr, serveErr, raw)
				}
				if checked {
					accepted++
				}
			})
		}
	}
	t.Logf("%d configs (%d runs accepted by both)", len(corpus), accepted)
	if accepted < 5 {
		t.Errorf("only %d runs were accepted: the corpus is not what this test thinks", accepted)
	}
}

// checkVerdict runs `config check FILE` without a server and returns
// its stderr and whether it exited 0.
func checkVerdict(path string) (string, bool) {
	var out, errb bytes.Buffer
	code := configCheck(context.Background(), []string{"check", path}, cliEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	return strings.TrimSpace(errb.String()), code == cliExitOK
}

// serveVerdict is serve's start with FILE: its flags set the listen
// addresses to port 0 and off and the data to a temporary directory (what
// an operator's flags may always override). The test has no NATS cluster:
// a config with nats_url runs on the embedded server, with one replica.
func serveVerdict(t *testing.T, path string) error {
	cfg, _, _, err := serveConfig(path, serveFlags{listen: "127.0.0.1:0", data: t.TempDir(), natsListen: "off"})
	if err != nil {
		return err
	}
	if cfg.NATSURL != "" {
		cfg.NATSURL, cfg.Replicas = "", 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, app.Options{Config: cfg, ConfigFile: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- a.Run(rctx) }()
	select {
	case <-a.Started():
		stop()
		if err := <-ran; err != nil {
			t.Errorf("shutdown: %v", err)
		}
		return nil
	case err := <-ran:
		stop()
		return errors.Join(errors.New("stopped while starting"), err)
	}
}

// configCorpus is every config the repository holds, by where it is.
func configCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"config.DemoYAML": []byte(config.DemoYAML)}
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	grouped, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*", "*.md"))
	docs = append(docs, grouped...)
	for _, md := range append(docs, filepath.Join(repoRoot, "README.md")) {
		for i, b := range yamlBlocks(t, md) {
			out[rel(md)+" block "+strconv.Itoa(i+1)] = b
		}
	}
	for _, f := range []string{"deploy/systemd/countersign.yaml"} {
		out[f] = readRepo(t, f)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(readRepo(t, "deploy/kubernetes/countersign-config.yaml"), &cm); err != nil || cm.Data["countersign.yaml"] == "" {
		t.Fatalf("deploy/kubernetes/countersign-config.yaml: no data countersign.yaml (%v)", err)
	}
	out["deploy/kubernetes/countersign-config.yaml"] = []byte(cm.Data["countersign.yaml"])
	for name, b := range fuzzCorpus(t) {
		out[name] = b
	}
	for name, b := range testConfigs(t) {
		out[name] = b
	}
	return out
}

func readRepo(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, f))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rel(p string) string {
	r, err := filepath.Rel(repoRoot, p)
	if err != nil {
		return p
	}
	return r
}

var yamlFence = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// yamlBlocks are md's yaml blocks that are full configs (with tenants:).
func yamlBlocks(t *testing.T, md string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, m := range yamlFence.FindAllSubmatch(b, -1) {
		if isFullConfig(string(m[1])) {
			out = append(out, m[1])
		}
	}
	return out
}

var tenantsKey = regexp.MustCompile(`(?m)^tenants:`)

func isFullConfig(s string) bool { return tenantsKey.MatchString(s) }

// fuzzCorpus is config's fuzz seeds that are full configs.
func fuzzCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "config", "testdata", "fuzz", "*", "*"))
	for _, f := range files {
		for _, line := range strings.Split(string(readRepo(t, rel(f))), "\n") {
			lit, ok := strings.CutPrefix(line, "[]byte(")
			if !ok {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err == nil && isFullConfig(s) {
				out[rel(f)] = []byte(s)
			}
		}
	}
	return out
}

// testConfigs are the raw string literals of the repository's tests that
// are full configs, by file and line.
func testConfigs(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != repoRoot && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || !strings.HasPrefix(lit.Value, "`") {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && isFullConfig(s) {
				out[rel(p)+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)] = []byte(s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// namedVar is a variable a config names, and the key that names it.
type namedVar struct{ key, name string }

// namedVars are the variables raw names (every key ending in _env).
func namedVars(raw []byte) []namedVar {
	var root yaml.Node
	if yaml.Unmarshal(raw, &root) != nil {
		return nil
	}
	var out []namedVar
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if strings.HasSuffix(k.Value, "_env") && v.Kind == yaml.ScalarNode && v.Value != "" {
				out = append(out, namedVar{k.Value, v.Value})
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return out
}

// envValue is a value of the shape key's variable takes.
func envValue(t *testing.T, key string) string {
	t.Helper()
	switch key {
	case "secret_env":
		return "whsec_" + base64.StdEncoding.EncodeToString([]byte("the agreement test's webhook key"))
	case "audit_signing_key_env":
		skey, _, err := note.GenerateKey(rand.Reader, "countersign-agreement-test")
		if err != nil {
			t.Fatal(err)
		}
		return skey
	case "auth_callout_seed_env":
		kp, err := nkeys.CreateAccount()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		return string(seed)
	}
	return "a-secret-of-the-agreement-test"
}
