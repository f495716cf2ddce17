package httpapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/prometheus/client_golang/prometheus"
)

// New refuses a config it cannot run with (ErrConfig), and a registry
// that already holds its metrics, instead of serving unmeasured.
func TestNewValidates(t *testing.T) {
	store, views, _ := testutil.NewState(t, "tenants: [{id: acme}]\n")
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views)})
	if err != nil {
		t.Fatal(err)
	}
	ready := func(context.Context) error { return nil }
	if _, err := httpapi.New(httpapi.Config{Ready: ready}); !errors.Is(err, httpapi.ErrConfig) {
		t.Errorf("New without the Service: %v, want ErrConfig", err)
	}
	if _, err := httpapi.New(httpapi.Config{Service: svc}); !errors.Is(err, httpapi.ErrConfig) {
		t.Errorf("New without Ready: %v, want ErrConfig", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := httpapi.New(httpapi.Config{Service: svc, Ready: ready, Registry: reg}); err != nil {
		t.Fatalf("New(a whole config) = %v", err)
	}
	if _, err := httpapi.New(httpapi.Config{Service: svc, Ready: ready, Registry: reg}); err == nil {
		t.Error("New registered its metrics twice in one registry without an error")
	}
	for _, name := range []string{"countersign_decision_link_uses_total", "countersign_slack_interactions_total"} {
		taken := prometheus.NewRegistry()
		taken.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "another collector's"}))
		if _, err := httpapi.New(httpapi.Config{Service: svc, Ready: ready, Registry: taken}); err == nil {
			t.Errorf("New with %s already registered: no error", name)
		}
	}
}

// newChecker is the check order over views, without a judge or rules.
func newChecker(views deciders.State) *deciders.Checker {
	c, err := deciders.NewChecker(deciders.CheckerConfig{Views: views})
	if err != nil {
		panic(err) // only a nil views is refused
	}
	return c
}
