package testutil

import "regexp"

var tenantLine = regexp.MustCompile(`(?m)^  - id: .*\n`)

// Unthrottled is yaml, a configuration whose tenants are listed as
// "  - id: …" lines, with every tenant's quotas (SPEC §5) lifted: for a
// test that submits from one token far faster than an agent may.
func Unthrottled(yaml string) string {
	return tenantLine.ReplaceAllStringFunc(yaml, func(line string) string {
		return line + "    max_pending: 100000000\n    submit_rate: 100000000\n    submit_burst: 100000000\n"
	})
}
