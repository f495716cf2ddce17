package views

import (
	"slices"
	"sort"
)

// keysetBlock bounds a keyset's blocks: an insert or a removal moves at
// most this many keys, and a walk from a key finds its block by binary
// search.
const keysetBlock = 512

// keyset is a sorted set of keys, kept in blocks of at most keysetBlock.
// Keys that arrive in order (request and grant ids are ULIDs) append to
// the last block.
type keyset struct {
	blocks [][]string
	n      int
}

// block returns the index of the first block whose last key is ≥ k
// (len(blocks) when k is past every key).
func (s *keyset) block(k string) int {
	return sort.Search(len(s.blocks), func(i int) bool { b := s.blocks[i]; return b[len(b)-1] >= k })
}

func (s *keyset) add(k string) {
	bi := s.block(k)
	if bi == len(s.blocks) {
		if bi == 0 || len(s.blocks[bi-1]) >= keysetBlock {
			s.blocks = append(s.blocks, make([]string, 0, keysetBlock))
			bi++
		}
		s.blocks[bi-1] = append(s.blocks[bi-1], k)
		s.n++
		return
	}
	b := s.blocks[bi]
	i, found := slices.BinarySearch(b, k)
	if found {
		return
	}
	b = slices.Insert(b, i, k)
	s.n++
	if len(b) <= keysetBlock {
		s.blocks[bi] = b
		return
	}
	half := len(b) / 2
	right := append(make([]string, 0, keysetBlock), b[half:]...)
	s.blocks[bi] = append(make([]string, 0, keysetBlock), b[:half]...)
	s.blocks = slices.Insert(s.blocks, bi+1, right)
}

func (s *keyset) remove(k string) {
	bi := s.block(k)
	if bi == len(s.blocks) {
		return
	}
	b := s.blocks[bi]
	i, found := slices.BinarySearch(b, k)
	if !found {
		return
	}
	b = slices.Delete(b, i, i+1)
	s.n--
	if len(b) == 0 {
		s.blocks = slices.Delete(s.blocks, bi, bi+1)
		return
	}
	s.blocks[bi] = b
}

// ascend calls fn with each key after after ("": from the first), in
// order, until fn returns false.
func (s *keyset) ascend(after string, fn func(k string) bool) {
	bi, i := 0, 0
	if after != "" {
		bi = s.block(after)
		if bi < len(s.blocks) {
			i, _ = slices.BinarySearch(s.blocks[bi], after)
			if i < len(s.blocks[bi]) && s.blocks[bi][i] == after {
				i++
			}
		}
	}
	for ; bi < len(s.blocks); bi, i = bi+1, 0 {
		for _, k := range s.blocks[bi][i:] {
			if !fn(k) {
				return
			}
		}
	}
}
