package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Each scenario runs end to end against a real in-process server for a
// moment and completes requests without errors. (Figures come from
// `countersign bench`, not from tests.)
func TestScenariosRun(t *testing.T) {
	for _, sc := range []string{"grant", "grant-bus", "person", "quorum", "agent", "judge"} {
		t.Run(sc, func(t *testing.T) {
			r, err := Run(context.Background(), Options{Scenario: sc, Concurrency: 4, Workers: 2, Duration: 2 * time.Second}) // long enough for a loaded machine to finish some
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests == 0 || r.Errors != 0 || r.P50ms <= 0 {
				t.Fatalf("%s: %+v; want requests, no errors", sc, r)
			}
		})
	}
}

// The floor serves the grant and person scenarios through the same load
// as countersign, and refuses the others and a remote server.
func TestFloorRuns(t *testing.T) {
	for _, sc := range []string{"grant", "person"} {
		r, err := Run(context.Background(), Options{Scenario: sc, Floor: true, Concurrency: 4, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests == 0 || r.Errors != 0 || r.Floor == "" || r.Audit != "" {
			t.Fatalf("floor %s: %+v; want requests, no errors, the floor named", sc, r)
		}
	}
	for _, o := range []Options{{Scenario: "quorum", Floor: true}, {Scenario: "person", Floor: true, URL: "http://127.0.0.1:1"}} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Fatalf("%+v: want an error", o)
		}
	}
}

func TestUnknownScenario(t *testing.T) {
	if _, err := Run(context.Background(), Options{Scenario: "nope"}); err == nil {
		t.Fatal("want an error for an unknown scenario")
	}
}

// The fill runs end to end on a built countersign in child processes: it
// creates its requests, restarts the server on them, times list pages, and
// reports every figure, the peak memory of the two processes included.
func TestFillRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildCountersign(t)
	keep := t.TempDir()
	r, err := Run(context.Background(), Options{Scenario: "fill", Requests: 1100, Concurrency: 8, Exe: bin, KeepData: keep})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 1100 || r.FilledRSS <= 0 || r.RSSBytes <= 0 || r.ReadyMs <= 0 || r.P99ms <= 0 {
		t.Fatalf("fill: %+v; want every figure", r)
	}
	if runtime.GOOS == "linux" && r.PeakRSS < max(r.FilledRSS, r.RSSBytes) {
		t.Fatalf("fill: peak RSS %.0f below what was seen (%.0f filled, %.0f restarted)", r.PeakRSS, r.FilledRSS, r.RSSBytes)
	}
	if _, err := os.Stat(filepath.Join(keep, "countersign.yaml")); err != nil {
		t.Fatalf("--keep-data: %v", err)
	}
}

// buildCountersign builds the binary the child-process scenarios run.
func buildCountersign(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "countersign")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/countersign").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The hold runs on a built countersign in a child process: it creates
// more pending requests than the demo's submit burst allows a token (the
// child's limits are lifted), holds a long-poll on each, and reports the
// memory a held poll costs.
func TestHoldRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	r, err := Run(context.Background(), Options{Scenario: "hold", Polls: 300, Exe: buildCountersign(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 300 {
		t.Fatalf("hold: %+v; want 300 polls held", r)
	}
}
