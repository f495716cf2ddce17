package kvstate

import "github.com/countersign/countersign/events"

// move is one legal change of a request: its event type, the status it may
// start from ("" for creation) and the statuses it may end in.
type move struct {
	from []events.Status
	to   []events.Status
}

const none events.Status = ""

// legal is the table of legal moves (SPEC §4). Creation may end terminal
// when steps 1–4 decided; every other move starts from pending except a
// claim, which keeps an approval approved.
var legal = map[string]move{
	events.TypeRequestCreated:   {from: []events.Status{none}, to: []events.Status{events.StatusPending}},
	events.TypeRequestDecided:   {from: []events.Status{none, events.StatusPending}, to: []events.Status{events.StatusApproved, events.StatusDenied}},
	events.TypeRequestEscalated: {from: []events.Status{events.StatusPending}, to: []events.Status{events.StatusPending}},
	events.TypeRequestUpdated:   {from: []events.Status{events.StatusPending}, to: []events.Status{events.StatusPending}},
	events.TypeRequestExpired:   {from: []events.Status{events.StatusPending}, to: []events.Status{events.StatusExpired}},
	events.TypeRequestCancelled: {from: []events.Status{events.StatusPending}, to: []events.Status{events.StatusCancelled}},
	events.TypeRequestClaimed:   {from: []events.Status{events.StatusApproved}, to: []events.Status{events.StatusApproved}},
}

// Legal reports whether a change of type typ may take a request from
// status from (none for creation) to status to.
func Legal(typ string, from, to events.Status) bool {
	m, ok := legal[typ]
	return ok && contains(m.from, from) && contains(m.to, to)
}

func contains(xs []events.Status, s events.Status) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
