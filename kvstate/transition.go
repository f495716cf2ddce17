package kvstate

import (
	"cmp"
	"slices"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// move is one legal change of a request: its event type, the status it may
// start from ("" for creation) and the statuses it may end in.
type move struct {
	from []domain.Status
	to   []domain.Status
}

const none domain.Status = ""

// legal is the table of legal moves (SPEC §4). Creation may end terminal
// when steps 1–4 decided; every other move starts from pending except a
// claim, which keeps an approval approved.
var legal = map[string]move{
	events.TypeRequestCreated:   {from: []domain.Status{none}, to: []domain.Status{domain.StatusPending}},
	events.TypeRequestDecided:   {from: []domain.Status{none, domain.StatusPending}, to: []domain.Status{domain.StatusApproved, domain.StatusDenied}},
	events.TypeRequestEscalated: {from: []domain.Status{domain.StatusPending}, to: []domain.Status{domain.StatusPending}},
	events.TypeRequestUpdated:   {from: []domain.Status{domain.StatusPending}, to: []domain.Status{domain.StatusPending}},
	events.TypeRequestExpired:   {from: []domain.Status{domain.StatusPending}, to: []domain.Status{domain.StatusExpired}},
	events.TypeRequestCancelled: {from: []domain.Status{domain.StatusPending}, to: []domain.Status{domain.StatusCancelled}},
	events.TypeRequestClaimed:   {from: []domain.Status{domain.StatusApproved}, to: []domain.Status{domain.StatusApproved}},
}

// Legal reports whether a change of type typ may take a request from
// status from (none for creation) to status to.
func Legal(typ string, from, to domain.Status) bool {
	m, ok := legal[typ]
	return ok && contains(m.from, from) && contains(m.to, to)
}

func contains(xs []domain.Status, s domain.Status) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Move is one legal change of a request's status: a change of event type
// Type taking it from From (none, "", for creation) to To.
type Move struct {
	Type     string
	From, To domain.Status
}

// Moves lists every legal move of the table, sorted by type, from and to:
// a read-only copy for checks such as the lifecycle diagram's test.
func Moves() []Move {
	var out []Move
	for typ, m := range legal {
		for _, from := range m.from {
			for _, to := range m.to {
				out = append(out, Move{Type: typ, From: from, To: to})
			}
		}
	}
	slices.SortFunc(out, func(a, b Move) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out
}
