package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/countersign/countersign/domain"
)

// patterns refuses a config that would fail open (SPEC §10): a policy
// pattern that matches no capability, a read rule that reaches beyond
// reads. The error names the pattern's own line.
func (tc *TenantConfig) patterns(t *domain.Tenant) error {
	if err := tc.shadowReadRules(t); err != nil {
		return err
	}
	for i, p := range tc.ReadRules {
		if err := domain.CheckReadRule(p, t.ShellTools...); err != nil {
			return lineErr(lineOf(tc.readRuleLines, i, tc.line), "read_rules: %v", err)
		}
	}
	for _, m := range tc.Members {
		if m.Policy == nil {
			continue
		}
		for _, l := range []struct {
			name     string
			patterns []string
			lines    []int
		}{{"allow", m.Policy.Allow, m.allowLines}, {"deny", m.Policy.Deny, m.denyLines}} {
			for i, p := range l.patterns {
				if err := domain.CheckPattern(p); err != nil {
					return lineErr(lineOf(l.lines, i, m.line), "member %q: policy %s: %v", m.ID, l.name, err)
				}
			}
		}
	}
	return nil
}

// lineOf is the line of entry i, or def when the entry's line is unknown
// (a config built in code).
func lineOf(lines []int, i, def int) int {
	if i < len(lines) {
		return lines[i]
	}
	return def
}

// seqLines is the line of each entry of the sequence at path under the
// mapping n (nil when there is none).
func seqLines(n *yaml.Node, path ...string) []int {
	for _, key := range path {
		n = valueOf(n, key)
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]int, len(n.Content))
	for i, c := range n.Content {
		out[i] = c.Line
	}
	return out
}

// valueOf is the value of key in mapping n, or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
