package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/countersign/countersign/domain"
)

// Outline is one tenant of a config as GET /v1/config shows it, and as
// `countersign config check` compares two configs: ids, digests of what
// each holds, and each token's principal and scopes — never a token, nor
// its hash.
type Outline struct {
	Tenant string `json:"tenant"`
	// Settings digests everything of the tenant but its members, agents
	// and tokens (timeouts, quotas, read rules, judge, and keys added
	// later).
	Settings string            `json:"settings"`
	Members  map[string]string `json:"members"` // id → digest
	Agents   map[string]string `json:"agents"`  // id → digest
	Tokens   []TokenOutline    `json:"tokens"`
}

// TokenOutline is a token without the token.
type TokenOutline struct {
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes"`
}

// OutlineOf outlines tenant t.
func OutlineOf(t *domain.Tenant) Outline {
	o := Outline{Tenant: string(t.ID), Members: map[string]string{}, Agents: map[string]string{}, Tokens: []TokenOutline{}}
	for id, m := range t.Members {
		o.Members[string(id)] = digest(m)
	}
	for id, a := range t.Agents {
		o.Agents[string(id)] = digest(a, a.Rules)
	}
	for _, tok := range t.Tokens {
		o.Tokens = append(o.Tokens, TokenOutline{Principal: tok.Principal.Kind + ":" + tok.Principal.ID, Scopes: tok.Scopes})
	}
	slices.SortFunc(o.Tokens, func(a, b TokenOutline) int { return strings.Compare(a.key(), b.key()) })
	rest := *t
	rest.Members, rest.Agents, rest.Tokens = nil, nil, nil
	o.Settings = digest(rest)
	return o
}

func (t TokenOutline) key() string { return t.Principal + " [" + strings.Join(t.Scopes, " ") + "]" }

// digest is a short hash of vs' JSON: it tells a change, nothing more.
func digest(vs ...any) string {
	h := sha256.New()
	for _, v := range vs {
		b, _ := json.Marshal(v)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Diff lists what changes from o to next, one line each: "+ member u-2",
// "- token person:u-1 [approvals:read]", "~ agent agt_main", "~ settings".
// A token replaced by another with the same principal and scopes does not
// show: the outline holds no token.
func (o Outline) Diff(next Outline) []string {
	var out []string
	if o.Settings != next.Settings {
		out = append(out, "~ settings")
	}
	out = append(out, diffIDs("member", o.Members, next.Members)...)
	out = append(out, diffIDs("agent", o.Agents, next.Agents)...)
	return append(out, diffTokens(o.Tokens, next.Tokens)...)
}

func diffIDs(kind string, a, b map[string]string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(a)) {
		switch d, ok := b[id]; {
		case !ok:
			out = append(out, fmt.Sprintf("- %s %s", kind, id))
		case d != a[id]:
			out = append(out, fmt.Sprintf("~ %s %s", kind, id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[id]; !ok {
			out = append(out, fmt.Sprintf("+ %s %s", kind, id))
		}
	}
	return out
}

// diffTokens compares tokens as multisets of principal and scopes.
func diffTokens(a, b []TokenOutline) []string {
	count := map[string]int{}
	for _, t := range a {
		count[t.key()]++
	}
	for _, t := range b {
		count[t.key()]--
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		for n := count[k]; n > 0; n-- {
			out = append(out, "- token "+k)
		}
		for n := count[k]; n < 0; n++ {
			out = append(out, "+ token "+k)
		}
	}
	return out
}

// DiffTenants lists what changes from the tenants before to those after,
// each line prefixed with its tenant; a tenant added or removed is one
// line.
func DiffTenants(before, after []Outline) []string {
	index := func(os []Outline) map[string]Outline {
		m := map[string]Outline{}
		for _, o := range os {
			m[o.Tenant] = o
		}
		return m
	}
	a, b := index(before), index(after)
	var out []string
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[id]; !ok {
			out = append(out, "- tenant "+id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b)) {
		old, ok := a[id]
		if !ok {
			out = append(out, "+ tenant "+id)
			continue
		}
		for _, line := range old.Diff(b[id]) {
			out = append(out, "tenant "+id+": "+line)
		}
	}
	return out
}
