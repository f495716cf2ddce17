package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// BadEntryError names the first entry of a log that breaks its chain:
// its line in the file, the seq it should have, and why.
type BadEntryError struct {
	Line   int
	Seq    uint64
	Reason string
}

func (e *BadEntryError) Error() string {
	return fmt.Sprintf("audit: entry %d (line %d): %s", e.Seq, e.Line, e.Reason)
}

// Chain checks a log line by line, from its first entry (seq 1, prev 64
// zeros), and builds its Merkle tree as it goes.
type Chain struct {
	n      uint64 // entries checked
	prev   string
	tenant string // the first entry's
	tree   Tree
}

// Add checks line as the next entry: its exact RFC 8785 form, its members,
// its seq, its link to the previous entry and its hash. Errors:
// *BadEntryError.
func (c *Chain) Add(line []byte) error {
	want := c.n + 1
	bad := func(format string, a ...any) error {
		return &BadEntryError{Line: int(want), Seq: want, Reason: fmt.Sprintf(format, a...)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return bad("not a JSON object: %v", err)
	}
	if err := checkKeys(obj); err != nil {
		return bad("%v", err)
	}
	if canon, err := canonical(obj); err != nil || !bytes.Equal(canon, line) {
		return bad("not in RFC 8785 form")
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return bad("%v", err)
	}
	prev, tenant := c.prev, c.tenant
	if c.n == 0 {
		prev, tenant = ZeroHash, e.Tenant
	}
	switch h, _ := hashOf(obj); {
	case e.Seq != want:
		return bad("seq is %d", e.Seq)
	case e.Tenant != tenant:
		return bad("tenant %q in a log of %q", e.Tenant, tenant)
	case e.Prev != prev:
		return bad("prev %.12s… is not the previous entry's hash %.12s…", e.Prev, prev)
	case e.Hash != h:
		return bad("hash %.12s… is not the entry's hash %.12s…", e.Hash, h)
	}
	if err := c.tree.Append(line); err != nil {
		return bad("%v", err)
	}
	c.n, c.prev, c.tenant = want, e.Hash, tenant
	return nil
}

func checkKeys(obj map[string]json.RawMessage) error {
	for _, k := range entryKeys {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("no %q", k)
		}
	}
	if len(obj) != len(entryKeys) {
		for k := range obj {
			if !slices.Contains(entryKeys, k) {
				return fmt.Errorf("unknown member %q", k)
			}
		}
	}
	return nil
}

// Len returns how many entries were checked.
func (c *Chain) Len() uint64 { return c.n }

// Tenant returns the tenant of the entries checked.
func (c *Chain) Tenant() string { return c.tenant }

// Tree returns the Merkle tree of the entries checked.
func (c *Chain) Tree() *Tree { return &c.tree }

// VerifyLog reads an exported log (JSON Lines, each ending in a newline)
// and checks every entry. It returns the chain checked; errors:
// *BadEntryError, or the reader's.
func VerifyLog(r io.Reader) (*Chain, error) {
	c := &Chain{}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return c, nil
		}
		if err != nil && err != io.EOF {
			return c, err
		}
		if !bytes.HasSuffix(line, []byte("\n")) {
			return c, &BadEntryError{Line: int(c.n + 1), Seq: c.n + 1, Reason: "truncated: no newline at the end"}
		}
		if err := c.Add(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
			return c, err
		}
	}
}
