package outbox_test

import (
	"errors"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/outbox"
)

// New refuses a config it cannot run with, naming ErrConfig: each part
// left out on its own is refused, and the whole config is taken.
func TestNewValidates(t *testing.T) {
	store, views, _ := testutil.NewState(t, "tenants: [{id: acme}]\n")
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views)})
	if err != nil {
		t.Fatal(err)
	}
	full := outbox.Config{JS: testutil.NewJetStream(t).JS, Store: store, Views: views, Grants: svc, Streams: events.StreamConfigs(1)}
	if _, err := outbox.New(full); err != nil {
		t.Fatalf("New(a whole config) = %v", err)
	}
	for name, drop := range map[string]func(*outbox.Config){
		"JetStream": func(c *outbox.Config) { c.JS = nil },
		"store":     func(c *outbox.Config) { c.Store = nil },
		"views":     func(c *outbox.Config) { c.Views = nil },
		"grants":    func(c *outbox.Config) { c.Grants = nil },
		"streams":   func(c *outbox.Config) { c.Streams = nil },
	} {
		cfg := full
		drop(&cfg)
		if _, err := outbox.New(cfg); !errors.Is(err, outbox.ErrConfig) {
			t.Errorf("New without %s: %v, want ErrConfig", name, err)
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
