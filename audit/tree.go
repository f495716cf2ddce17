package audit

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Tree is a log's Merkle tree as golang.org/x/mod/sumdb/tlog stores it:
// every stored hash, in storage order. Record seq is leaf seq-1, its data
// the entry's exported line. It implements tlog.HashReader.
type Tree struct {
	hashes []tlog.Hash
	n      int64
}

// Append adds the next record.
func (t *Tree) Append(line []byte) error {
	hs, err := tlog.StoredHashes(t.n, line, t)
	if err != nil {
		return err
	}
	t.hashes = append(t.hashes, hs...)
	t.n++
	return nil
}

// Size returns how many records the tree holds.
func (t *Tree) Size() int64 { return t.n }

// ReadHashes implements tlog.HashReader.
func (t *Tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("audit: tree hash %d not stored (%d records)", x, t.n)
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}

// Root returns the hash of the tree of its first n records.
func (t *Tree) Root(n int64) (tlog.Hash, error) {
	if n < 0 || n > t.n {
		return tlog.Hash{}, fmt.Errorf("audit: no tree of size %d (%d records)", n, t.n)
	}
	return tlog.TreeHash(n, t)
}

// ProveTree returns the consistency proof between the trees of sizes old
// and n.
func (t *Tree) ProveTree(old, n int64) ([]tlog.Hash, error) {
	if old < 1 || old > n || n > t.n {
		return nil, fmt.Errorf("audit: no proof from size %d to %d (%d records)", old, n, t.n)
	}
	return tlog.ProveTree(n, old, t)
}

// ProveRecord returns the inclusion proof of record seq (leaf seq-1) in the
// tree of size n.
func (t *Tree) ProveRecord(seq, n int64) ([]tlog.Hash, error) {
	if seq < 1 || seq > n || n > t.n {
		return nil, fmt.Errorf("audit: no proof of entry %d in size %d (%d records)", seq, n, t.n)
	}
	return tlog.ProveRecord(n, seq-1, t)
}

var _ tlog.HashReader = (*Tree)(nil)
