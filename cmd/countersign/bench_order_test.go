package main

import (
	"slices"
	"testing"
)

// TestRoundOrderRotates: over n rounds every run of --floor's n holds
// every place once, so none always follows the same one.
func TestRoundOrderRotates(t *testing.T) {
	for n := 1; n <= 4; n++ {
		places := make([][]int, n) // places[run]: the places it held
		for r := range n {
			order := roundOrder(r, n)
			sorted := slices.Sorted(slices.Values(order))
			if !slices.Equal(sorted, roundOrder(0, n)) {
				t.Fatalf("round %d of %d: %v is no order of every run", r, n, order)
			}
			for place, run := range order {
				places[run] = append(places[run], place)
			}
		}
		for run, ps := range places {
			if slices.Sort(ps); !slices.Equal(ps, roundOrder(0, n)) {
				t.Fatalf("n=%d: run %d held places %v, want each once", n, run, ps)
			}
		}
	}
}
