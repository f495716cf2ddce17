package jcs

import (
	"fmt"
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
		slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.key, b.key) })
		if key := duplicate(ms); key != nil {
			return duplicateError(key)
		}
		p.reorder(ms, from)
	}
	p.out = append(p.out, '}')
	return nil
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
