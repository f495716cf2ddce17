package adapter

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
)

// Call is one intercepted tool call: exactly what will run if it is
// approved. The approval is bound to all of it (SPEC §4, exact-call
// binding), so the same values must describe the call that runs.
type Call struct {
	// Tool is shorthand for the capability tools.call:<Tool>. Set Tool or
	// Capability, not both.
	Tool       string
	Capability domain.Capability
	// Arguments is the JSON object the tool runs with. It is sent as is and
	// copied at the start of Do.
	Arguments json.RawMessage
	// Timeout is the approval timeout to request (at least 1s). Zero asks
	// for the tenant's default. It is shortened to fit the wait limit.
	Timeout time.Duration
	// Reason is the agent's plain-language reason, shown to deciders as
	// quoted data.
	Reason string
	// Session, Turn and ToolCallID identify the call in its harness.
	Session, Turn, ToolCallID string
	// Subject describes a non-tool approval ("shell"); nil means a tool.
	Subject *domain.Subject
	// Connection binds an apps.call to one connection revision.
	Connection *domain.Connection
	// IdempotencyKey recovers an earlier submission of the same call (for
	// example after the process restarted). Empty: a fresh key.
	IdempotencyKey string
	// TakeEdits, when set, says the harness can run this call with other
	// arguments: an approval with edits (SPEC §5, "Approve with edits")
	// then runs, and Do gives TakeEdits the edited arguments right after
	// the claim, before run. Nil: an approval with edits does not run
	// (NotObtained, ErrEdited).
	TakeEdits func(arguments json.RawMessage)
}

// capability returns the capability the call asks for.
func (c Call) capability() domain.Capability {
	if c.Tool != "" {
		return domain.Capability{Action: domain.ActionToolsCall, Target: c.Tool}
	}
	return c.Capability
}

// validate reports ErrInvalidCall for a call that cannot be submitted.
func (c Call) validate() error {
	cp := c.capability()
	switch {
	case c.Tool != "" && c.Capability != (domain.Capability{}):
		return fmt.Errorf("%w: set Tool or Capability, not both", ErrInvalidCall)
	case cp.Action == "" || cp.Target == "":
		return fmt.Errorf("%w: no capability", ErrInvalidCall)
	case c.Timeout != 0 && c.Timeout < time.Second:
		return fmt.Errorf("%w: timeout %v is under 1s", ErrInvalidCall, c.Timeout)
	}
	return validArguments(c.Arguments)
}

// validArguments accepts exactly one JSON object.
func validArguments(raw json.RawMessage) error {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return fmt.Errorf("%w: arguments must be a JSON object", ErrInvalidCall)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the arguments", ErrInvalidCall)
	}
	return nil
}

// digest is the call_digest of this call as made by tenant and agent.
func (c Call) digest(tenant domain.TenantID, agent domain.AgentID) (string, error) {
	return domain.CallDigest(domain.CallBinding{
		Tenant: string(tenant), Agent: string(agent),
		Session: c.Session, Turn: c.Turn, ToolCallID: c.ToolCallID,
		Capability: c.capability(), Arguments: c.Arguments, Connection: c.Connection,
	})
}

// body encodes the submit body with the effective timeout (0: omitted).
func (c Call) body(timeout time.Duration) ([]byte, error) {
	b := domain.Submission{
		Tool: c.Tool, Arguments: c.Arguments, Reason: c.Reason,
		Session: c.Session, Turn: c.Turn, ToolCallID: c.ToolCallID,
		Subject: c.Subject, Connection: c.Connection,
	}
	if c.Tool == "" {
		cp := c.Capability
		b.Capability = &cp
	}
	if timeout > 0 {
		b.Timeout = timeout.String()
	}
	return json.Marshal(b)
}

// newIdempotencyKey returns a random UUIDv4-shaped key.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
