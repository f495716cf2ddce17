package deciders

import (
	"fmt"

	"github.com/countersign/countersign/domain"
)

// CheckerConfig configures a Checker.
type CheckerConfig struct {
	// Views is the state the check order reads. Required.
	Views State
	// Judge, if set, is consulted at step 4 for tenants that have a
	// judge. Default none: step 4 passes the request on.
	Judge RulesJudge
	// Rules returns an agent's rules (configured and kept). Default none.
	Rules func(tenant *domain.Tenant, agent domain.AgentID) []domain.Rule
}

// Validate reports a missing setting.
func (c *CheckerConfig) Validate() error {
	if c.Views == nil {
		return fmt.Errorf("%w: the checker needs Views", ErrConfig)
	}
	return nil
}

// NewChecker returns the Checker of cfg, or ErrConfig.
func NewChecker(cfg CheckerConfig) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Checker{views: cfg.Views, judge: cfg.Judge, rulesOf: cfg.Rules}, nil
}

// Views is the state the checker reads (agents, grants), for the callers
// that route what it leaves undecided (Next).
func (c *Checker) Views() State { return c.views }

// WithoutJudge is a copy of c that runs steps 1–3 only: no rule is read
// by the judge.
func (c *Checker) WithoutJudge() *Checker {
	d := *c
	d.judge = nil
	return &d
}
