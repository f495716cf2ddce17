package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/countersign/countersign/domain"
)

// A read rule is a pattern, or {match: PATTERN, mode: enforce|shadow}
// (SPEC §16): in shadow mode it is evaluated on live requests and never
// decides.
type shadowRead struct {
	pattern string
	line    int
}

// takeShadowReads rewrites tenant mapping n's read_rules before it is
// decoded: each {match, mode} entry becomes its pattern when enforced and
// is taken out into t.shadowReads when in shadow mode. Any other key or
// mode is refused with its line.
func (t *TenantConfig) takeShadowReads(n *yaml.Node) error {
	seq := valueOf(n, "read_rules")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	kept := seq.Content[:0:0]
	for _, e := range seq.Content {
		if e.Kind != yaml.MappingNode {
			kept = append(kept, e)
			continue
		}
		match, mode, err := readRuleEntry(e)
		if err != nil {
			return err
		}
		if mode == domain.ModeShadow {
			t.shadowReads = append(t.shadowReads, shadowRead{pattern: match.Value, line: match.Line})
			continue
		}
		kept = append(kept, match)
	}
	seq.Content = kept
	return nil
}

func readRuleEntry(e *yaml.Node) (match *yaml.Node, mode string, err error) {
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i], e.Content[i+1]
		switch {
		case k.Value == "match" && v.Kind == yaml.ScalarNode:
			match = v
		case k.Value == "mode" && (v.Value == domain.ModeEnforce || v.Value == domain.ModeShadow):
			mode = v.Value
		case k.Value == "mode":
			return nil, "", lineErr(v.Line, "read_rules: mode: %q is neither enforce nor shadow", v.Value)
		default:
			return nil, "", lineErr(k.Line, "read_rules: unknown key %q (a read rule is a pattern, or {match, mode})", k.Value)
		}
	}
	if match == nil {
		return nil, "", lineErr(e.Line, "read_rules: match: a read rule's pattern is required")
	}
	return match, mode, nil
}

// shadowReadRules checks the shadow read rules as read rules and carries
// them into t.
func (tc *TenantConfig) shadowReadRules(t *domain.Tenant) error {
	for _, r := range tc.shadowReads {
		if err := domain.CheckReadRule(r.pattern); err != nil {
			return lineErr(r.line, "read_rules: %v", err)
		}
		t.ShadowReadRules = append(t.ShadowReadRules, r.pattern)
	}
	return nil
}
