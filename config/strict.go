package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeStrict decodes one YAML document into a Config after checking every
// mapping key in it, at any depth, against the yaml tags of the type it
// decodes into. (yaml's KnownFields does not reach types that decode
// themselves, such as those below that remember their line.)
func decodeStrict(b []byte) (*Config, *yaml.Node, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("config: line 1: the file is empty (no tenants)")
		}
		return nil, nil, yamlErr(b, err)
	}
	var c Config
	if err := checkKeys(&root, reflect.TypeOf(c)); err != nil {
		return nil, nil, err
	}
	if err := root.Decode(&c); err != nil {
		return nil, nil, yamlErr(b, err)
	}
	if len(root.Content) == 1 {
		if n := valueOf(root.Content[0], "replicas"); n != nil {
			c.replicasLine = n.Line
		}
		if n := valueOf(root.Content[0], "request_shards"); n != nil {
			c.requestShardsLine = n.Line
		}
	}
	return &c, &root, nil
}

// namesALine matches an error that names its line.
var namesALine = regexp.MustCompile(`line \d+`)

// yamlErr names the line of a YAML syntax error. The YAML library leaves
// the line out when the error is on the first line, and at an unexpected
// end of the file.
func yamlErr(b []byte, err error) error {
	msg := err.Error()
	switch {
	case namesALine.MatchString(msg):
		return fmt.Errorf("config: %w", err)
	case strings.Contains(msg, "end of stream"):
		return lineErr(bytes.Count(b, []byte("\n"))+1, "%s", msg)
	}
	return lineErr(1, "%s", msg)
}

// checkKeys refuses any mapping key under n that type t does not name.
// Nodes whose shape does not fit t are left for the decoder to refuse.
func checkKeys(n *yaml.Node, t reflect.Type) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkKeys(c, t); err != nil {
				return err
			}
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, c := range n.Content {
			if isNull(c) && isStruct(t.Elem()) {
				return lineErr(c.Line, "empty list entry")
			}
			if err := checkKeys(c, t.Elem()); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 1; i < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i], t.Elem()); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		return checkStruct(n, t)
	}
	return nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func isStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func checkStruct(n *yaml.Node, t reflect.Type) error {
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		if !ok {
			return lineErr(k.Line, "unknown field %q", k.Value)
		}
		if err := checkKeys(n.Content[i+1], ft); err != nil {
			return err
		}
	}
	return nil
}

// yamlFields maps the keys a struct type decodes (inline structs' too) to
// their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-" || !f.IsExported():
		case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
		case name != "":
			out[name] = f.Type
		default:
			out[strings.ToLower(f.Name)] = f.Type
		}
	}
	return out
}

// atLine gives a whole-file error from Validate the line of the key it is
// about; errors that name a line already pass unchanged.
func atLine(err error, root *yaml.Node) error {
	msg := err.Error()
	if namesALine.MatchString(msg) {
		return err
	}
	key := "tenants"
	if strings.Contains(msg, "role") {
		key = "roles"
	}
	if strings.Contains(msg, "public_url") {
		key = "public_url"
	}
	if strings.HasPrefix(msg, "config: oidc:") {
		key = "oidc"
	}
	return lineErr(topLine(root, key), "%s", strings.TrimPrefix(msg, "config: "))
}

// topLine is the line of top-level key in root, or 1.
func topLine(root *yaml.Node, key string) int {
	if root != nil && root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		m := root.Content[0]
		for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i].Line
			}
		}
	}
	return 1
}

// decodeAt decodes n into plain, a config type converted to a local type
// without its UnmarshalYAML (else decoding would call it again), and
// remembers n's line in *line for the errors Validate names it by.
func decodeAt[P any](n *yaml.Node, line *int, plain *P) error {
	*line = n.Line
	return n.Decode(plain)
}

// UnmarshalYAML remembers the line (decodeAt); so do those below.
func (t *TenantConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain TenantConfig
	if err := t.takeShadowReads(n); err != nil {
		return err
	}
	err := decodeAt(n, &t.line, (*plain)(t))
	t.readRuleLines = seqLines(n, "read_rules")
	t.shellToolLines = seqLines(n, "shell_tools")
	return err
}

func (m *MemberConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain MemberConfig
	err := decodeAt(n, &m.line, (*plain)(m))
	m.allowLines, m.denyLines = seqLines(n, "policy", "allow"), seqLines(n, "policy", "deny")
	return err
}

func (a *AgentConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain AgentConfig
	return decodeAt(n, &a.line, (*plain)(a))
}

func (t *TokenConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain TokenConfig
	return decodeAt(n, &t.line, (*plain)(t))
}

func (j *JudgeConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain JudgeConfig
	return decodeAt(n, &j.line, (*plain)(j))
}

func (w *WebhookConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain WebhookConfig
	return decodeAt(n, &w.line, (*plain)(w))
}

func (g *GroupConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain GroupConfig
	err := decodeAt(n, &g.line, (*plain)(g))
	g.memberLines = seqLines(n, "members")
	return err
}

func (p *ApprovalPolicyConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain ApprovalPolicyConfig
	err := decodeAt(n, &p.line, (*plain)(p))
	p.matchLines = seqLines(n, "match")
	p.approversLine, p.approveLine = keyLine(n, "approvers"), keyLine(n, "approve")
	return err
}

// keyLine is the line of key's value in mapping n, or 0.
func keyLine(n *yaml.Node, key string) int {
	if v := valueOf(n, key); v != nil {
		return v.Line
	}
	return 0
}
