package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/countersign/countersign/domain"
	"go.yaml.in/yaml/v3"
)

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Defaults of a tenant (SPEC §10).
const (
	DefaultRequestTimeout = 24 * time.Hour
	DefaultApprovalTTL    = 5 * time.Minute
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultReviewTimeout  = 2 * time.Minute
	DefaultJudgeTimeout   = 20 * time.Second
	// DefaultRequestRetention is how long terminal records are kept.
	DefaultRequestRetention = 720 * time.Hour
	// DefaultAuditRetention is how long audit log entries are kept.
	DefaultAuditRetention = 400 * 24 * time.Hour
)

// Tenant validates tc and returns its domain form; errors name the line.
func (tc *TenantConfig) Tenant() (*domain.Tenant, error) {
	if !domain.ConfigIDPattern.MatchString(tc.ID) {
		return nil, lineErr(tc.line, "tenant id %q must match [A-Za-z0-9_-]{1,64}", tc.ID)
	}
	t := &domain.Tenant{ID: domain.TenantID(tc.ID), ReadRules: tc.ReadRules,
		Members: map[domain.MemberID]*domain.Member{}, Agents: map[domain.AgentID]*domain.Agent{}}
	var err error
	if t.RequestTimeout, err = duration(tc.line, "request_timeout", tc.RequestTimeout, DefaultRequestTimeout); err != nil {
		return nil, err
	}
	if t.ApprovalTTL, err = duration(tc.line, "approval_ttl", tc.ApprovalTTL, DefaultApprovalTTL); err != nil {
		return nil, err
	}
	if t.IdempotencyTTL, err = duration(tc.line, "idempotency_ttl", tc.IdempotencyTTL, DefaultIdempotencyTTL); err != nil {
		return nil, err
	}
	if t.RequestRetention, err = duration(tc.line, "request_retention", tc.RequestRetention, DefaultRequestRetention); err != nil {
		return nil, err
	}
	if t.AuditRetention, err = duration(tc.line, "audit_retention", tc.AuditRetention, DefaultAuditRetention); err != nil {
		return nil, err
	}
	if err := tc.quotas(t); err != nil {
		return nil, err
	}
	for _, step := range []func(*domain.Tenant) error{tc.members, tc.shellTools, tc.patterns, tc.groups, tc.agents, tc.chains, tc.tokens, tc.judge, tc.notify} {
		if err := step(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (tc *TenantConfig) members(t *domain.Tenant) error {
	for _, m := range tc.Members {
		if !domain.ConfigIDPattern.MatchString(m.ID) {
			return lineErr(m.line, "member id %q must match [A-Za-z0-9_-]{1,64}", m.ID)
		}
		if t.Members[domain.MemberID(m.ID)] != nil {
			return lineErr(m.line, "duplicate member id %q", m.ID)
		}
		t.Members[domain.MemberID(m.ID)] = &domain.Member{ID: domain.MemberID(m.ID), Policy: m.Policy, Email: m.Email, Name: m.Name}
		if err := validName(m.Name); err != nil {
			return lineErr(m.line, "member %q: %v", m.ID, err)
		}
	}
	if err := tc.emails(); err != nil {
		return err
	}
	return tc.backups(t)
}

// emails: a member's email, when given, is one address (no spaces) that no
// other member of the tenant has; sign-in matches it (SPEC §13).
func (tc *TenantConfig) emails() error {
	seen := map[string]string{}
	for _, m := range tc.Members {
		if m.Email == "" {
			continue
		}
		e := strings.ToLower(m.Email)
		if strings.TrimSpace(e) != e || strings.ContainsAny(e, " \t") {
			return lineErr(m.line, "member %q: email %q has spaces", m.ID, m.Email)
		}
		if other, ok := seen[e]; ok {
			return lineErr(m.line, "member %q: email %q is also member %q's", m.ID, m.Email, other)
		}
		seen[e] = m.ID
	}
	return nil
}

// backups gives each member their backup and answer_within (SPEC §12):
// both or neither, the backup another member of the tenant, and no chain
// of backups coming back to a member it left.
func (tc *TenantConfig) backups(t *domain.Tenant) error {
	for _, m := range tc.Members {
		if m.Backup == "" && m.AnswerWithin == "" {
			continue
		}
		if m.Backup == "" {
			return lineErr(m.line, "member %q: answer_within needs a backup to move to", m.ID)
		}
		if m.AnswerWithin == "" {
			return lineErr(m.line, "member %q: backup %q needs answer_within (how long before it answers)", m.ID, m.Backup)
		}
		if t.Members[domain.MemberID(m.Backup)] == nil {
			return lineErr(m.line, "member %q: backup %q is not a member of tenant %q", m.ID, m.Backup, tc.ID)
		}
		d, err := duration(m.line, "answer_within", m.AnswerWithin, 0)
		if err != nil {
			return err
		}
		t.Members[domain.MemberID(m.ID)].Backup, t.Members[domain.MemberID(m.ID)].AnswerWithin = domain.MemberID(m.Backup), d
	}
	for _, m := range tc.Members {
		seen := map[domain.MemberID]bool{}
		for id := domain.MemberID(m.ID); id != ""; id = t.Members[id].Backup {
			if seen[id] {
				return lineErr(m.line, "member %q: backup cycle: %s", m.ID, backupPath(t, domain.MemberID(m.ID)))
			}
			seen[id] = true
		}
	}
	return nil
}

// backupPath is id's chain of backups, up to the first member repeated.
func backupPath(t *domain.Tenant, id domain.MemberID) string {
	seen := map[domain.MemberID]bool{}
	path := ""
	for ; !seen[id]; id = t.Members[id].Backup {
		seen[id] = true
		path += string(id) + " → "
	}
	return path + string(id)
}

func (tc *TenantConfig) agents(t *domain.Tenant) error {
	for _, a := range tc.Agents {
		if !domain.ConfigIDPattern.MatchString(a.ID) {
			return lineErr(a.line, "agent id %q must match [A-Za-z0-9_-]{1,64}", a.ID)
		}
		if t.Agents[domain.AgentID(a.ID)] != nil {
			return lineErr(a.line, "duplicate agent id %q", a.ID)
		}
		if t.Members[domain.MemberID(a.Member)] == nil {
			return lineErr(a.line, "agent %q: unknown member %q", a.ID, a.Member)
		}
		rt, err := duration(a.line, "review_timeout", a.ReviewTimeout, DefaultReviewTimeout)
		if err != nil {
			return err
		}
		if a.Reviewer != "" && a.Reviewer != "none" && a.Reviewer != "model" {
			return lineErr(a.line, "agent %q: reviewer must be none or model", a.ID)
		}
		if a.Reviewer == "model" && tc.Judge == nil {
			return lineErr(a.line, "agent %q: reviewer model needs the tenant's judge", a.ID)
		}
		t.Agents[domain.AgentID(a.ID)] = &domain.Agent{ID: domain.AgentID(a.ID), Tenant: t.ID, Member: domain.MemberID(a.Member),
			Parent: domain.AgentID(a.Parent), Role: a.Role, Brief: a.Brief, Memory: a.Memory, Rules: a.Rules,
			ReviewTimeout: rt, Reviewer: a.Reviewer}
	}
	return nil
}

// chains checks parents: each exists, has the same member, and no cycle.
func (tc *TenantConfig) chains(t *domain.Tenant) error {
	for _, ac := range tc.Agents {
		a := t.Agents[domain.AgentID(ac.ID)]
		seen := map[domain.AgentID]bool{a.ID: true}
		for p := a.Parent; p != ""; p = t.Agents[p].Parent {
			parent := t.Agents[p]
			switch {
			case parent == nil:
				return lineErr(ac.line, "agent %q: unknown parent %q", a.ID, p)
			case parent.Member != a.Member:
				return lineErr(ac.line, "agent %q: parent %q works for member %q, not %q", a.ID, p, parent.Member, a.Member)
			case seen[p]:
				return lineErr(ac.line, "agent %q: parents form a cycle through %q", a.ID, p)
			}
			seen[p] = true
		}
	}
	return nil
}

func (tc *TenantConfig) tokens(t *domain.Tenant) error {
	for _, tk := range tc.Tokens {
		tok, err := tk.token(t)
		if err != nil {
			return err
		}
		t.Tokens = append(t.Tokens, tok)
	}
	return nil
}

func (tk *TokenConfig) token(t *domain.Tenant) (domain.Token, error) {
	var hash string
	switch {
	case tk.Token != "" && tk.TokenSHA256 != "":
		return domain.Token{}, lineErr(tk.line, "give token or token_sha256, not both")
	case tk.Token != "":
		hash = domain.HashToken(tk.Token)
	case sha256Hex.MatchString(tk.TokenSHA256):
		hash = tk.TokenSHA256
	default:
		return domain.Token{}, lineErr(tk.line, "token_sha256 must be 64 lowercase hex digits")
	}
	p, ok := domain.ParsePrincipal(tk.Principal)
	if !ok {
		return domain.Token{}, lineErr(tk.line, "principal %q must be person:<id>, agent:<id> or service:<name>", tk.Principal)
	}
	if (p.Kind == domain.KindPerson && t.Members[domain.MemberID(p.ID)] == nil) ||
		(p.Kind == domain.KindAgent && t.Agents[domain.AgentID(p.ID)] == nil) {
		return domain.Token{}, lineErr(tk.line, "principal %q is not in tenant %q", tk.Principal, t.ID)
	}
	for _, s := range tk.Scopes {
		switch s {
		case domain.ScopeRequestsWrite, domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite, domain.ScopeAdmin, domain.ScopeEventsRead:
		default:
			return domain.Token{}, lineErr(tk.line, "unknown scope %q", s)
		}
	}
	if tk.Policy != nil {
		for _, pat := range slices.Concat(tk.Policy.Allow, tk.Policy.Deny) {
			if err := domain.CheckPattern(pat); err != nil {
				return domain.Token{}, lineErr(tk.line, "token policy: %v", err)
			}
		}
	}
	return domain.Token{SHA256: hash, Principal: p, Scopes: tk.Scopes, Policy: tk.Policy}, nil
}

func (tc *TenantConfig) judge(t *domain.Tenant) error {
	j := tc.Judge
	if j == nil {
		return nil
	}
	if j.BaseURL == "" || j.Model == "" {
		return lineErr(j.line, "judge: base_url and model are required")
	}
	d, err := duration(j.line, "judge.timeout", j.Timeout, DefaultJudgeTimeout)
	if err != nil {
		return err
	}
	t.Judge = &domain.JudgeConfig{BaseURL: j.BaseURL, Model: j.Model, APIKeyEnv: j.APIKeyEnv, Timeout: d}
	return nil
}

// PlainTokens reports whether any token is written in plain text (the
// server warns: plain tokens are for development).
func (c *Config) PlainTokens() bool {
	for _, t := range c.Tenants {
		for _, tk := range t.Tokens {
			if tk.Token != "" {
				return true
			}
		}
	}
	return false
}

// uniqueTokens refuses a token, or its hash, that appears twice anywhere in
// the file: a plain token and its SHA-256 are the same token. (One token in
// two tenants would authenticate to either.) The error names the second
// line and never shows the token.
func (c *Config) uniqueTokens() error {
	first := map[string]int{}
	for _, t := range c.Tenants {
		for _, tk := range t.Tokens {
			h := tk.TokenSHA256
			if tk.Token != "" {
				h = domain.HashToken(tk.Token)
			}
			if l, ok := first[h]; ok {
				return lineErr(tk.line, "token appears twice in the file (first at line %d); each token names one principal", l)
			}
			first[h] = tk.line
		}
	}
	return nil
}

// quotas sets the tenant's quotas (SPEC §5), each a positive whole
// number when given.
func (tc *TenantConfig) quotas(t *domain.Tenant) error {
	for _, q := range []struct {
		field string
		v     *wholeNumber
		def   int
		out   *int
	}{
		{"max_pending", tc.MaxPending, domain.DefaultMaxPending, &t.MaxPending},
		{"submit_rate", tc.SubmitRate, domain.DefaultSubmitRate, &t.SubmitRate},
		{"submit_burst", tc.SubmitBurst, domain.DefaultSubmitBurst, &t.SubmitBurst},
	} {
		switch {
		case q.v == nil:
			*q.out = q.def
		case *q.v <= 0:
			return lineErr(tc.line, "%s: must be a positive whole number, not %d", q.field, *q.v)
		default:
			*q.out = int(*q.v)
		}
	}
	return nil
}

// wholeNumber is a YAML integer; the YAML library would truncate 7.9
// into an int without a word.
type wholeNumber int

func (w *wholeNumber) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return fmt.Errorf("line %d: not a whole number: %q", n.Line, n.Value)
	}
	return n.Decode((*int)(w))
}

// validName: a member's name, when given, is 1 to 128 characters of
// printable text with no leading or trailing space (SPEC §10).
func validName(n string) error {
	if n == "" {
		return nil
	}
	if !utf8.ValidString(n) || utf8.RuneCountInString(n) > 128 {
		return fmt.Errorf("name must be at most 128 characters of UTF-8")
	}
	if strings.TrimSpace(n) != n {
		return fmt.Errorf("name %q has leading or trailing space", n)
	}
	for _, r := range n {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("name %q has a control or format character (%U)", n, r)
		}
	}
	return nil
}
