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

// The figure of each round is its own ratio, in the order the rounds ran,
// even after their medians were taken (median must not sort its input).
func TestPerRoundKeepsTheRounds(t *testing.T) {
	mine, floor := []float64{30, 10, 20}, []float64{10, 20, 40}
	if m := median(mine); m != 20 {
		t.Fatalf("median %v, want 20", m)
	}
	if got := perRound(mine, floor); !slices.Equal(got, []float64{3, 0.5, 0.5}) {
		t.Fatalf("per round %v, want [3 0.5 0.5]", got)
	}
	if s := ratios([]float64{0.618, 1}); s != "0.62 1.00" {
		t.Fatalf("ratios printed %q", s)
	}
}
