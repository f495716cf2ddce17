package kvstate

import (
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

func TestLegalMoves(t *testing.T) {
	P, A, D, E, C := domain.StatusPending, domain.StatusApproved, domain.StatusDenied, domain.StatusExpired, domain.StatusCancelled
	all := []domain.Status{none, P, A, D, E, C}
	legalSet := map[string]map[[2]domain.Status]bool{
		events.TypeRequestCreated:       {{none, P}: true},
		events.TypeRequestDecided:       {{none, A}: true, {none, D}: true, {P, A}: true, {P, D}: true},
		events.TypeRequestEscalated:     {{P, P}: true},
		events.TypeRequestExpired:       {{P, E}: true},
		events.TypeRequestCancelled:     {{P, C}: true},
		events.TypeRequestClaimed:       {{A, A}: true},
		"dev.countersign.request.bogus": {},
	}
	for typ, ok := range legalSet {
		for _, from := range all {
			for _, to := range all {
				want := ok[[2]domain.Status{from, to}]
				if got := Legal(typ, from, to); got != want {
					t.Errorf("Legal(%s, %q → %q) = %v, want %v", typ, from, to, got, want)
				}
			}
		}
	}
}

// TestMovesIsTheTable: Moves lists exactly the moves Legal accepts.
func TestMovesIsTheTable(t *testing.T) {
	all := []domain.Status{none, domain.StatusPending, domain.StatusApproved, domain.StatusDenied, domain.StatusExpired, domain.StatusCancelled}
	listed := map[Move]bool{}
	for _, m := range Moves() {
		listed[m] = true
		if !Legal(m.Type, m.From, m.To) {
			t.Errorf("Moves lists %+v, which Legal refuses", m)
		}
	}
	for typ := range legal {
		for _, from := range all {
			for _, to := range all {
				if Legal(typ, from, to) && !listed[Move{typ, from, to}] {
					t.Errorf("Legal accepts %s %q → %q, which Moves leaves out", typ, from, to)
				}
			}
		}
	}
}
