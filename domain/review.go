package domain

// ReviewBundle is the data of a review offer (SPEC §3, §9): the request and
// the short review of its current decider, and nothing else of the
// decider's history.
type ReviewBundle struct {
	Request Request       `json:"request"`
	Decider ReviewDecider `json:"decider"`
}

// ReviewDecider is the agent decider as its review sees it. Brief is the
// brief the decider gave: the brief of the agent right below it in the
// request's chain (the requester itself when the decider is its parent).
type ReviewDecider struct {
	ID     AgentID `json:"id"`
	Role   string  `json:"role"`
	Memory string  `json:"memory"`
	Brief  string  `json:"brief"`
}

// NewReviewBundle builds the bundle for decider reviewing r; briefOf
// returns an agent's own brief (the one its parent gave it).
func NewReviewBundle(r *Request, decider *Agent, briefOf func(AgentID) string) ReviewBundle {
	return ReviewBundle{Request: *r, Decider: ReviewDecider{ID: decider.ID, Role: decider.Role,
		Memory: decider.Memory, Brief: briefGiven(r.Chain, decider.ID, briefOf)}}
}

// briefGiven is the brief of the agent right below decider in chain, or ""
// when decider is not in chain or is its last link.
func briefGiven(chain []AgentID, decider AgentID, briefOf func(AgentID) string) string {
	for i, a := range chain {
		if a == decider && i+1 < len(chain) {
			return briefOf(chain[i+1])
		}
	}
	return ""
}

// PersonReviewBundle is the data of a review.requested on a person's
// subject (SPEC §9, "People's workers on the bus"): the request and the
// person it waits on, {"id", "kind": "person"}. The outbox writes it with
// the record's text as stored (outbox/people/people.go).
type PersonReviewBundle struct {
	Request Request `json:"request"`
	Decider Ref     `json:"decider"`
}

// ReviewWithdrawn is the data of a review.withdrawn: the request that no
// longer waits on the person, and its status now (pending when it moved
// to another approver).
type ReviewWithdrawn struct {
	RequestID RequestID `json:"request_id"`
	Status    Status    `json:"status"`
}
