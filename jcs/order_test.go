package jcs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// shuffledObject writes an object of keys in a random order; with nested,
// every third value is an object of its own whose keys are shuffled too.
func shuffledObject(rng *rand.Rand, keys []string, nested bool) string {
	order := rng.Perm(len(keys))
	var b strings.Builder
	b.WriteByte('{')
	for i, j := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", keys[j])
		if nested && j%3 == 0 {
			b.WriteString(shuffledObject(rng, keys[:orderedMin], false))
		} else {
			fmt.Fprintf(&b, "%d", j)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// TestRememberedOrders canonicalizes objects of a few shapes many times,
// so that most of them meet an order remembered for their shape, and
// checks every result against the canonicalizer the package replaced.
func TestRememberedOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"zeta", "alpha", "é", "\U0001F600", "\uE000", "id", "a", "aa", "ab", "b", "created_at", "Z", "_", "\\\"q"}
	shapes := make([]string, 5)
	for i := range shapes {
		shapes[i] = shuffledObject(rng, keys, true)
	}
	for i := range 2000 {
		raw := shapes[i%len(shapes)]
		if i%7 == 0 { // a new shape now and then: more than ordersMax in all
			raw = shuffledObject(rng, keys, true)
		}
		checkOracle(t, []byte(raw))
	}
}

// TestStaleOrderIsNotTrusted: an order remembered for a shape that is
// not the sorted order of the keys met (a hash collision, say) is not
// used, and neither is one that names members the object lacks.
func TestStaleOrderIsNotTrusted(t *testing.T) {
	raw := []byte(`{"h":8,"g":7,"f":6,"e":5,"d":4,"c":3,"b":2,"a":1}`)
	want := `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}`
	p := new(parser)
	p.reset(raw, nil)
	if err := p.document(); err != nil || string(p.out) != want {
		t.Fatalf("first pass: %s, %v", p.out, err)
	}
	if len(p.orders) != 1 {
		t.Fatalf("remembered %d orders, want 1", len(p.orders))
	}
	for h := range p.orders {
		for _, wrong := range [][]uint16{
			{0, 1, 2, 3, 4, 5, 6, 7},  // as read: not increasing
			{7, 6, 5, 4, 3, 2, 1, 1},  // a member twice
			{7, 6, 5, 4, 3, 2, 1, 99}, // a member it lacks
		} {
			p.orders[h] = wrong
			p.reset(raw, nil)
			if err := p.document(); err != nil || string(p.out) != want {
				t.Fatalf("with order %v remembered: %s, %v; want %s", wrong, p.out, err, want)
			}
		}
	}
}

// TestRememberedOrderKeepsDuplicates: a shape with a key twice is
// refused every time, order remembered or not.
func TestRememberedOrderKeepsDuplicates(t *testing.T) {
	ok := []byte(`{"h":8,"g":7,"f":6,"e":5,"d":4,"c":3,"b":2,"a":1}`)
	dup := []byte(`{"h":8,"g":7,"f":6,"e":5,"d":4,"c":3,"a":2,"a":1}`)
	for range 3 {
		if _, err := Canonicalize(ok); err != nil {
			t.Fatal(err)
		}
		if _, err := Canonicalize(dup); errKind(err) != ErrDuplicateKey.Error() {
			t.Fatalf("duplicate key: %v", err)
		}
	}
}
