package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Typed identifiers. Requests, grants, rules, events and subagents get
// prefixed ULIDs; configured ids (tenants, members, agents) are chosen by
// the operator and match ConfigIDPattern.
type (
	RequestID string
	GrantID   string
	RuleID    string
	EventID   string
	AgentID   string
	MemberID  string
	TenantID  string
)

// ConfigIDPattern is the shape of a configured id (SPEC §1).
var ConfigIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// generatedIDPattern matches ids made by this package: prefix_ULID.
var generatedIDPattern = regexp.MustCompile(`^(req|grt|rul|evt|agt)_[0-9A-HJKMNP-TV-Z]{26}$`)

// MaxOpaqueIDLen bounds session, turn and tool-call ids (bytes).
const MaxOpaqueIDLen = 256

var (
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

func newULID(t time.Time) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), entropy).String()
}

// NewRequestID returns a fresh req_ ULID.
func NewRequestID() RequestID { return RequestID("req_" + newULID(time.Now())) }

// NewGrantID returns a fresh grt_ ULID.
func NewGrantID() GrantID { return GrantID("grt_" + newULID(time.Now())) }

// NewRuleID returns a fresh rul_ ULID.
func NewRuleID() RuleID { return RuleID("rul_" + newULID(time.Now())) }

// NewEventID returns a fresh evt_ ULID.
func NewEventID() EventID { return EventID("evt_" + newULID(time.Now())) }

// NewAgentID returns a fresh agt_ ULID for a registered subagent.
func NewAgentID() AgentID { return AgentID("agt_" + newULID(time.Now())) }

// DerivedGrantID returns the grant id that one decision gives one agent:
// a ULID whose time is the decision's and whose entropy is a hash of the
// request and the agent, so that writing it twice writes one grant.
func DerivedGrantID(req RequestID, agent AgentID, at time.Time) GrantID {
	sum := sha256.Sum256([]byte(string(req) + "\x00" + string(agent)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return GrantID("grt_" + id.String())
}

// DerivedStageGrantID is the stable id of the grant a shell request's
// stage leaves for agent: DerivedGrantID's, with the stage in the hash.
func DerivedStageGrantID(req RequestID, agent AgentID, stage int, at time.Time) GrantID {
	sum := sha256.Sum256([]byte(string(req) + "\x00" + string(agent) + "\x00" + strconv.Itoa(stage)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return GrantID("grt_" + id.String())
}

// DerivedRuleID is the stable id of a configured rule: its entropy is a
// hash of the agent and the text, so it survives restarts.
func DerivedRuleID(agent AgentID, text string) RuleID {
	sum := sha256.Sum256([]byte(string(agent) + "\x00" + text))
	var id ulid.ULID
	_ = id.SetEntropy(sum[:10])
	return RuleID("rul_" + id.String())
}

// ValidGeneratedID reports whether s looks like an id this package made.
func ValidGeneratedID(s string) bool { return generatedIDPattern.MatchString(s) }
