package config

import (
	"github.com/countersign/countersign/domain"
)

// shellTools sets the tenant's shell_tools (SPEC §8): each a tool name
// (SPEC §5), none twice. Absent, the tenant has the default
// (domain.ShellTools); an empty list names none.
func (tc *TenantConfig) shellTools(t *domain.Tenant) error {
	if tc.ShellTools == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, name := range tc.ShellTools {
		line := lineOf(tc.shellToolLines, i, tc.line)
		if err := domain.CheckToolName(name); err != nil {
			return lineErr(line, "shell_tools: %q: %v", name, err)
		}
		if seen[name] {
			return lineErr(line, "shell_tools: %q is listed twice", name)
		}
		seen[name] = true
	}
	t.ShellTools = append([]string{}, tc.ShellTools...)
	return nil
}
