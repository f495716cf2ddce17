package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/countersign/countersign"

// rank orders the packages: a package may import only packages of a
// strictly lower rank.
var rank = map[string]int{
	"jcs":                         -2, // RFC 8785, beneath the domain nouns
	"clock":                       -2, // time and timers, beneath everything that waits
	"backoff":                     -2, // the one retry delay, beneath everything that retries
	"domain":                      -1, // the domain nouns and the tenant model
	"events":                      0,  // subjects, event types, the CloudEvents codec, streams
	"display":                     0,
	"shell":                       0,
	"problem":                     0,
	"internal/gcpace":             0,
	"config":                      1,
	"judge":                       1,
	"links":                       1,
	"signin":                      1,
	"kvstate":                     1,
	"internal/broker":             1,
	"internal/checks/layout":      1,
	"internal/cli":                1,
	"views/pack":                  1, // the read model's compression, beneath it
	"views/snapshot":              1, // the mirror snapshot's format and parts, beneath it
	"approvals/wire":              1, // the endpoints' wire: strict decode, waits, cursors, pages
	"outbox/people":               1, // what the outbox tells people's workers
	"outbox/heal":                 1, // derived streams kept alive across NATS restarts
	"views":                       2,
	"audit":                       2,
	"deciders":                    3,
	"notify":                      3,
	"outbox":                      3,
	"internal/testkit/testutil":   3, // tests only: an embedded JetStream, Eventually, a clock
	"internal/testkit/oidctest":   3, // tests only: an OpenID provider
	"approvals":                   4,
	"approvals/replay":            4, // what a candidate config would have done (SPEC §16)
	"adapter":                     4,
	"httpapi":                     5,
	"busapi":                      5,
	"internal/app":                6,
	"internal/testkit/servertest": 7, // tests only: real servers
	"internal/bench":              7,
	"internal/checks/cluster":     7,
	"internal/checks/conformance": 7,
	"cmd/countersign":             8,
	"examples":                    8, // mains a reader copies
	"docs":                        9, // tests only: the diagrams and links of the reference
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func list(t *testing.T) []pkg {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

// rankOf ranks a package by its longest known prefix (adapter/... shares
// the adapter's rank).
func rankOf(rel string) (int, bool) {
	best, r, ok := "", 0, false
	for name, n := range rank {
		if (rel == name || strings.HasPrefix(rel, name+"/")) && len(name) > len(best) {
			best, r, ok = name, n, true
		}
	}
	return r, ok
}

func TestImportsPointDown(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		from, ok := rankOf(rel)
		if !ok {
			t.Errorf("package %s is not in the layout; add it to rank", rel)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				checkExternal(t, rel, imp)
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			to, _ := rankOf(irel)
			sameTree := !strings.HasPrefix(rel, "internal") && strings.SplitN(irel, "/", 2)[0] == strings.SplitN(rel, "/", 2)[0]
			if to >= from && !sameTree {
				t.Errorf("%s (rank %d) imports %s (rank %d): imports must point down", rel, from, irel, to)
			}
			if strings.HasPrefix(rel, "adapter") && irel != "domain" && irel != "problem" && irel != "backoff" && !strings.HasPrefix(irel, "adapter") {
				t.Errorf("adapter imports %s: it may import only domain, problem and backoff", irel)
			}
			if rel == "deciders/review" && irel != "domain" && irel != "events" {
				t.Errorf("deciders/review imports %s: a library for agent runtimes may import only domain and events", irel)
			}
		}
	}
}

func checkExternal(t *testing.T, rel, imp string) {
	if rel == "deciders/review" && strings.Contains(imp, ".") && imp != "github.com/nats-io/nats.go" {
		t.Errorf("deciders/review imports %s: besides domain and events it may import only nats.go", imp)
	}
	if (rel == "shell" || strings.HasPrefix(rel, "shell/")) && strings.Contains(imp, ".") && imp != "mvdan.cc/sh/v3/syntax" {
		t.Errorf("shell imports %s: the stage splitter may import only the standard library and mvdan.cc/sh/v3/syntax", imp)
	}
	if strings.HasPrefix(rel, "judge") && strings.Contains(imp, "nats-io") {
		t.Errorf("judge imports %s: the judge has no NATS and no state", imp)
	}
}

// TestTestProviderNotInTheBinary: the OpenID provider of the tests
// (internal/testkit/oidctest, zitadel's op) is never built into countersign.
func TestTestProviderNotInTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/cmd/countersign").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "zitadel") || dep == module+"/internal/testkit/oidctest" {
			t.Errorf("the binary depends on %s, a test-only provider", dep)
		}
	}
}
