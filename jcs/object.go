package jcs

import (
	"fmt"
	"hash/maphash"
	"slices"
)

// object reads an object, writes its members as they come, and puts them
// in RFC 8785 order when it closes.
func (p *parser) object() error {
	if err := p.open(); err != nil {
		return err
	}
	base, from := len(p.members), len(p.out)
	err := p.readMembers()
	if err == nil {
		err = p.closeObject(p.members[base:], from)
	} else {
		err = p.earlierDuplicate(p.members[base:], err)
	}
	p.members = p.members[:base]
	return err
}

// readMembers reads the members of an object up to its closing brace.
func (p *parser) readMembers() error {
	for first := true; ; first = false {
		more, err := p.more('}', first)
		if err != nil || !more {
			return err
		}
		if err := p.member(first); err != nil {
			return err
		}
	}
}

// member reads one `"key":value`, recording its key before its value so
// that a duplicate key is known even if the value is malformed.
func (p *parser) member(first bool) error {
	if !first {
		p.out = append(p.out, ',')
	}
	start := len(p.out)
	key, err := p.key()
	if err != nil {
		return err
	}
	p.members = append(p.members, member{key: key, start: start})
	if err := p.expect(':'); err != nil {
		return err
	}
	p.out = append(p.out, ':')
	if err := p.value(); err != nil {
		return err
	}
	p.members[len(p.members)-1].end = len(p.out)
	return nil
}

// closeObject sorts ms, the members of the object whose first member
// starts at from in out, refuses a duplicate key, and closes the object.
func (p *parser) closeObject(ms []member, from int) error {
	if !sorted(ms) {
		if !p.knownOrder(ms) {
			p.scratch = append(p.scratch[:0], ms...)
			slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.key, b.key) })
			if key := duplicate(ms); key != nil {
				return duplicateError(key)
			}
			p.learnOrder(ms)
		}
		p.reorder(ms, from)
	}
	p.out = append(p.out, '}')
	return nil
}

// Objects of one shape (a stored record: the same keys, in the order its
// encoder writes them) come again and again, and sorting their members is
// most of what canonicalizing them costs. So a parser keeps the order it
// sorted each shape of remembered size into, by a hash of its keys, and
// tries that order first: it serves only if the keys then strictly
// increase, which is true of the sorted order alone, so a stale or
// colliding entry costs a sort and never a wrong result.

// orderedMin is the fewest members whose order is remembered: fewer sort
// in about the time a lookup takes.
const orderedMin = 8

// ordersMax bounds the shapes a parser remembers; at that many, it
// forgets them all and starts again.
const ordersMax = 64

// shapeSeed seeds shapeOf's hash, one seed for the process.
var shapeSeed = maphash.MakeSeed()

// shapeOf hashes the keys of ms in their order.
func shapeOf(ms []member) uint64 {
	var h uint64
	for _, m := range ms {
		h = (h ^ maphash.Bytes(shapeSeed, m.key)) * 0x100000001b3
	}
	return h
}

// knownOrder puts ms in the order remembered for its shape, and reports
// whether that is its sorted order; when not, ms is as it was.
func (p *parser) knownOrder(ms []member) bool {
	if len(ms) < orderedMin {
		return false
	}
	order, ok := p.orders[shapeOf(ms)]
	if !ok || len(order) != len(ms) {
		return false
	}
	p.scratch = p.scratch[:0]
	for i, j := range order {
		if int(j) >= len(ms) || i > 0 && compareUTF16(ms[order[i-1]].key, ms[j].key) >= 0 {
			return false
		}
		p.scratch = append(p.scratch, ms[j])
	}
	copy(ms, p.scratch)
	return true
}

// learnOrder remembers the order of sorted ms for the shape they had
// before sorting, held in p.scratch: for each place, the index its
// member had there.
func (p *parser) learnOrder(ms []member) {
	if len(ms) < orderedMin || len(ms) > 1<<16 {
		return
	}
	if p.orders == nil || len(p.orders) >= ordersMax {
		p.orders = make(map[uint64][]uint16, ordersMax)
	}
	order := make([]uint16, len(ms))
	for i, m := range ms { // the members were read in order of their start
		j, _ := slices.BinarySearchFunc(p.scratch, m.start, func(a member, start int) int { return a.start - start })
		order[i] = uint16(j)
	}
	p.orders[shapeOf(p.scratch)] = order
}

// sorted reports whether the keys of ms strictly increase.
func sorted(ms []member) bool {
	for i := 1; i < len(ms); i++ {
		if compareUTF16(ms[i-1].key, ms[i].key) >= 0 {
			return false
		}
	}
	return true
}

// duplicate returns a key that sorted ms holds twice, or nil.
func duplicate(ms []member) []byte {
	for i := 1; i < len(ms); i++ {
		if string(ms[i-1].key) == string(ms[i].key) {
			return ms[i].key
		}
	}
	return nil
}

// reorder rewrites out from from on with the members in the order of ms.
func (p *parser) reorder(ms []member, from int) {
	p.tmp = append(p.tmp[:0], p.out[from:]...)
	p.out = p.out[:from]
	for i, m := range ms {
		if i > 0 {
			p.out = append(p.out, ',')
		}
		p.out = append(p.out, p.tmp[m.start-from:m.end-from]...)
	}
}

// earlierDuplicate returns ErrDuplicateKey instead of err if the members
// read before err, ms, already repeat a key: the first fault in the text.
func (p *parser) earlierDuplicate(ms []member, err error) error {
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if seen[string(m.key)] {
			return duplicateError(m.key)
		}
		seen[string(m.key)] = true
	}
	return err
}

func duplicateError(key []byte) error {
	return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
}
