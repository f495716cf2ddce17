package domain

// Modes of an approval policy or a read rule (SPEC §16): enforced (the
// default) decides; shadow is evaluated on live requests and never
// decides.
const (
	ModeEnforce = "enforce"
	ModeShadow  = "shadow"
)

// Shadow is what a rule in shadow mode would have done with a request at
// its creation (SPEC §16): ID is the approval policy's id or the read
// rule's pattern; Outcome the status it would have left (approved,
// denied, pending); Approver, for pending, who it would have waited on.
type Shadow struct {
	ID       string `json:"id"`
	Outcome  Status `json:"outcome"`
	Approver *Ref   `json:"approver,omitempty"`
	// RequiredApprovals is the quorum it would have asked of Approver.
	RequiredApprovals int `json:"required_approvals,omitempty"`
}

// Agrees reports whether s is what r's creation did: the same status and,
// for a pending r, the same approver and quorum.
func (s Shadow) Agrees(r *Request) bool {
	if s.Outcome != r.Status {
		return false
	}
	if s.Outcome != StatusPending {
		return true
	}
	return s.Approver != nil && r.Approver != nil && *s.Approver == *r.Approver && s.RequiredApprovals == r.Quorum()
}
