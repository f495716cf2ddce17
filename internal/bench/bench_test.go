package bench

import (
	"context"
	"testing"
	"time"
)

// Each scenario runs end to end against a real in-process server for a
// moment and completes requests without errors. (Figures come from
// `countersign bench`, not from tests.)
func TestScenariosRun(t *testing.T) {
	for _, sc := range []string{"grant", "grant-bus", "person", "agent", "judge"} {
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

func TestUnknownScenario(t *testing.T) {
	if _, err := Run(context.Background(), Options{Scenario: "nope"}); err == nil {
		t.Fatal("want an error for an unknown scenario")
	}
}
