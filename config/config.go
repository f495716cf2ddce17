package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
)

// Config is the whole file. Flags override Listen, DataDir, NATSURL,
// NATSListen, Roles.
type Config struct {
	// Listen is the HTTP address. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// DataDir holds the embedded NATS store. Default ./data.
	DataDir string `yaml:"data_dir"`
	// NATSURL, when set, is an external cluster; empty runs embedded NATS.
	NATSURL string `yaml:"nats_url"`
	// NATSListen is the embedded server's client port, where bus clients
	// connect with their token. Default 127.0.0.1:4222; "off" disables it.
	NATSListen string `yaml:"nats_listen"`
	// Replicas of streams and buckets. Default 1 on the embedded server, 3
	// with nats_url; never guessed from the URL.
	Replicas int `yaml:"replicas"`
	// replicasLine is the line of the file's replicas key (0: not given).
	replicasLine int
	// RequestShards is K, the request shards (kvstate's shards.go): a
	// tenant's requests, idempotency keys and their events live in one of
	// K pairs of buckets, the hash of the tenant's id. Default 1. Fixed
	// once a request is stored.
	RequestShards int `yaml:"request_shards"`
	// requestShardsLine is the line of the file's request_shards key.
	requestShardsLine int
	// AuthCalloutSeedEnv names the variable holding the account nkey seed
	// (SA…) that signs auth callout answers on an external cluster whose
	// auth_callout issuer is that account. Empty: no callout service.
	AuthCalloutSeedEnv string `yaml:"auth_callout_seed_env"`
	// AuditSigningKeyEnv names the variable holding the note signer key
	// (PRIVATE+KEY+…) that signs the audit log's checkpoints (SPEC §14).
	// Empty: countersign makes one at first start and keeps it in its state.
	AuditSigningKeyEnv string `yaml:"audit_signing_key_env"`
	// Roles this process runs: api, deciders. Default both.
	Roles []string `yaml:"roles"`
	// MaxLongPolls bounds the long-polls one process holds at once; more
	// are answered 429 RateLimited. Default 100000.
	MaxLongPolls int `yaml:"max_long_polls"`
	// MaxConnections bounds the HTTP connections one process holds open
	// (each held long-poll or event stream holds one). Past it a few more
	// are served /healthz, /readyz and /metrics only, other requests on
	// them get 429 RateLimited; beyond those, connections are closed at
	// once. Default max_long_polls + 1000, lowered to what the open-file
	// limit leaves room for.
	MaxConnections int `yaml:"max_connections"`
	// HTTPTimeouts bound each HTTP connection.
	HTTPTimeouts HTTPTimeouts `yaml:"http_timeouts"`
	// PublicURL, when set, is the base of decision links
	// (<public_url>/d/<token>) in the events of requests waiting on a
	// person; it needs link_secret_env.
	PublicURL string `yaml:"public_url"`
	// LinkSecretEnv names the variable holding the key of decision links.
	LinkSecretEnv string `yaml:"link_secret_env"`
	// OIDC, when set, lets people sign in with an OpenID provider
	// (SPEC §13); it needs public_url (the redirect URI's base).
	OIDC *OIDCConfig `yaml:"oidc"`
	// Tenants. At least one.
	Tenants []*TenantConfig `yaml:"tenants"`
}

// HTTPTimeouts are Go durations ("30s"); zero keeps the default.
type HTTPTimeouts struct {
	// ReadHeader bounds reading a request's headers. Default 10s.
	ReadHeader time.Duration `yaml:"read_header"`
	// Read bounds reading a whole request, body included. Default 30s.
	Read time.Duration `yaml:"read"`
	// Write bounds handling a request and writing its answer; a long-poll
	// adds its wait, and an event stream applies it to each write.
	// Default 2m.
	Write time.Duration `yaml:"write"`
	// Idle closes a kept-alive connection that sends no request. Default 2m.
	Idle time.Duration `yaml:"idle"`
}

// TenantConfig is one tenant as written in the file.
type TenantConfig struct {
	ID             string          `yaml:"id"`
	RequestTimeout string          `yaml:"request_timeout"`
	ApprovalTTL    string          `yaml:"approval_ttl"`
	IdempotencyTTL string          `yaml:"idempotency_ttl"`
	ReadRules      []string        `yaml:"read_rules"`
	Members        []*MemberConfig `yaml:"members"`
	Agents         []*AgentConfig  `yaml:"agents"`
	Tokens         []*TokenConfig  `yaml:"tokens"`
	Judge          *JudgeConfig    `yaml:"judge"`
	line           int
	readRuleLines  []int // each read rule's line
	// shadowReads are the read rules in mode shadow (SPEC §16), taken
	// out of read_rules as it is decoded (shadow.go).
	shadowReads []shadowRead

	// Groups and ApprovalPolicies say who answers at the top of a chain
	// (SPEC §12).
	Groups           []*GroupConfig          `yaml:"groups"`
	ApprovalPolicies []*ApprovalPolicyConfig `yaml:"approval_policies"`

	// RequestRetention keeps terminal records this long after they end
	// (default 720h).
	RequestRetention string `yaml:"request_retention"`
	// AuditRetention keeps each audit log entry this long (default 9600h,
	// 400 days), whatever request_retention says (SPEC §14).
	AuditRetention string `yaml:"audit_retention"`
	// SlackSigningSecretEnv names the variable holding the Slack app's
	// signing secret; set, Slack buttons are interactive.
	SlackSigningSecretEnv string `yaml:"slack_signing_secret_env"`
	// Webhooks receive the tenant's events (SPEC §10).
	Webhooks []*WebhookConfig `yaml:"webhooks"`
	// Email, when set, mails members with an email about the requests
	// that wait on them (SPEC §10 "Email", email.go).
	Email *EmailConfig `yaml:"email"`

	// MaxPending bounds each agent's own pending requests (SPEC §5
	// "Quotas"); default 1000. SubmitRate is the submits a second each
	// token may make, in bursts of up to SubmitBurst; defaults 50 and
	// 100. Past either, a submit is 429 RateLimited.
	MaxPending  *wholeNumber `yaml:"max_pending"`
	SubmitRate  *wholeNumber `yaml:"submit_rate"`
	SubmitBurst *wholeNumber `yaml:"submit_burst"`

	// ShellTools name the tools whose arguments.command is a shell
	// command line (SPEC §8): a call of one is a shell request whatever
	// subject it declares. Absent: domain.ShellTools (Bash, shell,
	// run_shell_command, exec_command, local_shell); [] names none.
	ShellTools     []string `yaml:"shell_tools"`
	shellToolLines []int    // each shell tool's line
}

// MemberConfig is a person and their policy.
type MemberConfig struct {
	ID     string         `yaml:"id"`
	Policy *domain.Policy `yaml:"policy"`
	line   int
	// allowLines and denyLines are each policy pattern's line.
	allowLines, denyLines []int

	// SlackUserID is the member's Slack user (U024BE7LH): their clicks on
	// interactive Slack buttons answer as them.
	SlackUserID string `yaml:"slack_user_id"`

	// Email is matched against the ID token claim oidc.claim names when
	// the member signs in (SPEC §13), ignoring case.
	Email string `yaml:"email"`

	// Name is the member's name as people see it (SPEC §10 "People by
	// name"): 1 to 128 characters, no control characters. Absent: the ID
	// token's name claim, once they sign in; else the id alone.
	Name string `yaml:"name"`

	// Backup is the member who answers a request that has waited on this
	// one AnswerWithin (a positive Go duration) without an answer (SPEC
	// §12). Both or neither.
	Backup       string `yaml:"backup"`
	AnswerWithin string `yaml:"answer_within"`
}

// GroupConfig is people who answer together (SPEC §12).
type GroupConfig struct {
	ID      string   `yaml:"id"`
	Members []string `yaml:"members"`
	line    int
	// memberLines is each member entry's line.
	memberLines []int
}

// ApprovalPolicyConfig is one entry of approval_policies (SPEC §12).
type ApprovalPolicyConfig struct {
	ID    string   `yaml:"id"`
	Match []string `yaml:"match"`
	// Approvers is who answers; its group is required.
	Approvers *ApproversConfig `yaml:"approvers"`
	// Approve is the distinct people who must allow. Default 1.
	Approve *wholeNumber `yaml:"approve"`
	// Mode is enforce (the default) or shadow: evaluated on live
	// requests, never deciding (SPEC §16).
	Mode string `yaml:"mode"`
	line int
	// matchLines is each match pattern's line; approversLine and
	// approveLine those of the keys (0: not given).
	matchLines                 []int
	approversLine, approveLine int
}

// ApproversConfig is an approval policy's approvers.
type ApproversConfig struct {
	Group string `yaml:"group"`
}

// WebhookConfig is one endpoint that receives a tenant's events.
type WebhookConfig struct {
	URL string `yaml:"url"`
	// SecretEnv names the variable holding the signing secret (whsec_…
	// base64, or the raw key). Required for format cloudevents.
	SecretEnv string `yaml:"secret_env"`
	// Events are short types (request.created); empty: all.
	Events []string `yaml:"events"`
	// Format is cloudevents (default) or slack.
	Format string `yaml:"format"`
	line   int
}

// AgentConfig is a lasting agent.
type AgentConfig struct {
	ID            string   `yaml:"id"`
	Member        string   `yaml:"member"`
	Parent        string   `yaml:"parent"`
	Role          string   `yaml:"role"`
	Brief         string   `yaml:"brief"`
	Memory        string   `yaml:"memory"`
	Rules         []string `yaml:"rules"`
	ReviewTimeout string   `yaml:"review_timeout"`
	Reviewer      string   `yaml:"reviewer"`
	line          int
}

// TokenConfig maps a token (plain, for development, or its SHA-256) to a
// principal and scopes.
type TokenConfig struct {
	Token       string   `yaml:"token"`
	TokenSHA256 string   `yaml:"token_sha256"`
	Principal   string   `yaml:"principal"`
	Scopes      []string `yaml:"scopes"`
	// Policy narrows the calls this token submits (SPEC §2 step 1).
	Policy *domain.Policy `yaml:"policy"`
	line   int
}

// JudgeConfig points the rules judge at an OpenAI-compatible endpoint.
type JudgeConfig struct {
	BaseURL   string `yaml:"base_url"`
	Model     string `yaml:"model"`
	APIKeyEnv string `yaml:"api_key_env"`
	Timeout   string `yaml:"timeout"`
	line      int
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates YAML: every key, at any depth, must be one
// the file's shape names, and every error names a line.
func Parse(b []byte) (*Config, error) {
	c, root, err := decodeStrict(b)
	if err != nil {
		return nil, err
	}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, atLine(err, root)
	}
	return c, nil
}

func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = "./data"
	}
	if c.NATSListen == "" {
		c.NATSListen = DefaultNATSListen
	}
	if len(c.Roles) == 0 {
		c.Roles = []string{"api", "deciders"}
	}
}

// Validate checks the whole file; the error names the line.
func (c *Config) Validate() error {
	if len(c.Tenants) == 0 {
		return errors.New("config: no tenants")
	}
	seen := map[string]bool{}
	for _, t := range c.Tenants {
		if seen[t.ID] {
			return lineErr(t.line, "duplicate tenant id %q", t.ID)
		}
		seen[t.ID] = true
		if _, err := t.Tenant(); err != nil {
			return err
		}
	}
	if err := c.uniqueTokens(); err != nil {
		return err
	}
	t := c.HTTPTimeouts
	if c.MaxConnections < 0 || c.MaxLongPolls < 0 || t.ReadHeader < 0 || t.Read < 0 || t.Write < 0 || t.Idle < 0 {
		return errors.New("config: max_connections, max_long_polls and http_timeouts must not be negative")
	}
	if err := c.validateNATS(); err != nil {
		return err
	}
	if err := c.validateLinks(); err != nil {
		return err
	}
	if err := c.validateOIDC(); err != nil {
		return err
	}
	for _, r := range c.Roles {
		if r != "api" && r != "deciders" {
			return fmt.Errorf("config: unknown role %q (api, deciders)", r)
		}
	}
	return nil
}

// MaxRequestShards bounds request_shards (as kvstate.MaxShards does).
const MaxRequestShards = 64

// DefaultNATSListen is the embedded server's client port unless
// nats_listen says otherwise.
const DefaultNATSListen = "127.0.0.1:4222"

func (c *Config) validateNATS() error {
	if c.Replicas < 0 || c.Replicas > 5 || (c.replicasLine > 0 && c.Replicas == 0) {
		if c.replicasLine > 0 {
			return lineErr(c.replicasLine, "replicas: %d is not 1 to 5", c.Replicas)
		}
		return fmt.Errorf("config: replicas: %d is not 1 to 5", c.Replicas)
	}
	if c.RequestShards < 0 || c.RequestShards > MaxRequestShards || (c.requestShardsLine > 0 && c.RequestShards == 0) {
		if c.requestShardsLine > 0 {
			return lineErr(c.requestShardsLine, "request_shards: %d is not 1 to %d", c.RequestShards, MaxRequestShards)
		}
		return fmt.Errorf("config: request_shards: %d is not 1 to %d", c.RequestShards, MaxRequestShards)
	}
	if c.NATSListen != "" && c.NATSListen != "off" && !hostPort(c.NATSListen) {
		return fmt.Errorf("config: nats_listen: %q is not host:port or off", c.NATSListen)
	}
	if slices.Contains(c.Roles, "api") && !hostPort(c.Listen) {
		return fmt.Errorf("config: listen: %q is not host:port", c.Listen)
	}
	return nil
}

// hostPort: addr is host:port with a numeric port (the host may be empty).
func hostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	return err == nil && perr == nil && n >= 0 && n <= 65535
}

// Tenants converts every tenant to its domain form.
func (c *Config) DomainTenants() ([]*domain.Tenant, error) {
	out := make([]*domain.Tenant, 0, len(c.Tenants))
	for _, tc := range c.Tenants {
		t, err := tc.Tenant()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func lineErr(line int, format string, args ...any) error {
	return fmt.Errorf("config: line %d: %s", line, fmt.Sprintf(format, args...))
}

func duration(line int, field, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, lineErr(line, "%s: not a positive Go duration: %q", field, s)
	}
	return d, nil
}
