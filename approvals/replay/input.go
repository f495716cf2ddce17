package replay

import (
	"strings"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// DefaultSince is the window a replay reads when none is given.
const DefaultSince = 720 * time.Hour

// Candidate parses a candidate config file with the validation serve
// applies (config.Parse) and returns tenant's part of it, with the window
// of since (a Go duration; "" is DefaultSince) before now. Errors, each an
// InvalidRequest refusal naming its field: bad YAML or an invalid config
// ("config"), a config without that tenant, a bad duration ("since").
func Candidate(yaml []byte, tenant domain.TenantID, since string, now time.Time) (Input, error) {
	window := DefaultSince
	if since != "" {
		d, err := time.ParseDuration(since)
		if err != nil || d <= 0 {
			return Input{}, problem.Invalid("since", "since is a positive Go duration, such as 168h")
		}
		window = d
	}
	if strings.TrimSpace(string(yaml)) == "" {
		return Input{}, problem.Invalid("config", "config is required: the candidate config file's YAML")
	}
	cfg, err := config.Parse(yaml)
	if err != nil {
		return Input{}, problem.Invalid("config", err.Error())
	}
	tenants, err := cfg.DomainTenants()
	if err != nil {
		return Input{}, problem.Invalid("config", err.Error())
	}
	for _, t := range tenants {
		if t.ID == tenant {
			return Input{Candidate: t, Since: now.Add(-window), Until: now}, nil
		}
	}
	return Input{}, problem.Invalid("config", "the config has no tenant "+string(tenant))
}
