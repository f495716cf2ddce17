package config

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkKeys refuses keys of mapping node n that the yaml tags of v (a
// pointer to a struct) do not name: custom unmarshalers do not inherit the
// decoder's KnownFields setting.
func checkKeys(n *yaml.Node, v any) error {
	if n.Kind != yaml.MappingNode {
		return lineErr(n.Line, "expected a mapping")
	}
	known := map[string]bool{}
	rt := reflect.TypeOf(v).Elem()
	for i := 0; i < rt.NumField(); i++ {
		if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ","); tag != "" {
			known[tag] = true
		}
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			return lineErr(k.Line, "unknown field %q", k.Value)
		}
	}
	return nil
}

// UnmarshalYAML decodes strictly and remembers the line.
func (t *TenantConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain TenantConfig
	t.line = n.Line
	if err := checkKeys(n, t); err != nil {
		return err
	}
	return n.Decode((*plain)(t))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (m *MemberConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain MemberConfig
	m.line = n.Line
	if err := checkKeys(n, m); err != nil {
		return err
	}
	return n.Decode((*plain)(m))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (a *AgentConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain AgentConfig
	a.line = n.Line
	if err := checkKeys(n, a); err != nil {
		return err
	}
	return n.Decode((*plain)(a))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (t *TokenConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain TokenConfig
	t.line = n.Line
	if err := checkKeys(n, t); err != nil {
		return err
	}
	return n.Decode((*plain)(t))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (j *JudgeConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain JudgeConfig
	j.line = n.Line
	if err := checkKeys(n, j); err != nil {
		return err
	}
	return n.Decode((*plain)(j))
}
