package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrUnavailable: the audit stream did not answer.
var ErrUnavailable = problem.New(http.StatusServiceUnavailable, "Unavailable", "the audit log is unavailable; retry")

// Range is what GET /v1/audit reads: the entries after seq After, up to
// time Until (zero: up to the last).
type Range struct {
	After uint64
	Until time.Time
}

// ParseRange parses ?after=<seq>&until=<RFC 3339>; each may be absent.
// Errors: 400 InvalidRequest naming the parameter.
func ParseRange(after, until string) (Range, error) {
	var r Range
	if after != "" {
		n, err := strconv.ParseUint(after, 10, 64)
		if err != nil || after != strconv.FormatUint(n, 10) {
			return r, problem.Invalid("after", "after must be an entry's seq: a whole number")
		}
		r.After = n
	}
	if until != "" {
		t, err := time.Parse(time.RFC3339Nano, until)
		if err != nil {
			return r, problem.Invalid("until", "until must be an RFC 3339 time")
		}
		r.Until = t
	}
	return r, nil
}

// ProofQuery is GET /v1/audit/proof's question: the consistency of the
// tree of size Old with that of Size, or (Entry set) the inclusion of
// record Entry in the tree of Size.
type ProofQuery struct {
	Old, Entry, Size int64
}

// ParseProof parses ?old=M&size=N or ?entry=S&size=N: exactly one of old
// and entry, each a whole number from 1 to size. Errors: 400
// InvalidRequest naming the parameter.
func ParseProof(old, entry, size string) (ProofQuery, error) {
	num := func(name, s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || s != strconv.FormatInt(n, 10) {
			return 0, problem.Invalid(name, name+" must be a whole number from 1")
		}
		return n, nil
	}
	var q ProofQuery
	var err error
	switch {
	case (old == "") == (entry == ""):
		return q, problem.Invalid("old", "give either old (a consistency proof) or entry (an inclusion proof)")
	case size == "":
		return q, problem.Invalid("size", "size is required")
	}
	if q.Size, err = num("size", size); err != nil {
		return q, err
	}
	if old != "" {
		q.Old, err = num("old", old)
		if err == nil && q.Old > q.Size {
			err = problem.Invalid("old", "old must not be larger than size")
		}
		return q, err
	}
	q.Entry, err = num("entry", entry)
	if err == nil && q.Entry > q.Size {
		err = problem.Invalid("entry", "entry must not be larger than size")
	}
	return q, err
}

// Proof is GET /v1/audit/proof's answer: Old or Entry is set, as asked.
type Proof struct {
	Old   *int64   `json:"old,omitempty"`
	Entry *int64   `json:"entry,omitempty"`
	Size  int64    `json:"size"`
	Proof []string `json:"proof"`
}

// Prove answers q from tenant's tree as stored now. Errors: 400
// InvalidRequest naming size when the log is smaller, ErrUnavailable.
func (l *Log) Prove(ctx context.Context, t domain.TenantID, q ProofQuery) (Proof, error) {
	p := Proof{Size: q.Size, Proof: []string{}}
	err := l.Tree(ctx, t, func(tr *Tree) error {
		if q.Size > tr.Size() {
			return problem.Invalid("size", "the log has "+strconv.FormatInt(tr.Size(), 10)+" entries")
		}
		var hs []tlog.Hash
		var err error
		if q.Old != 0 {
			p.Old = &q.Old
			hs, err = tr.ProveTree(q.Old, q.Size)
		} else {
			p.Entry = &q.Entry
			hs, err = tr.ProveRecord(q.Entry, q.Size)
		}
		for _, h := range hs {
			p.Proof = append(p.Proof, base64.StdEncoding.EncodeToString(h[:]))
		}
		return err
	})
	return p, unavailable(err)
}

// unavailable maps a failure to read the stream to ErrUnavailable; a
// refusal passes as it is.
func unavailable(err error) error {
	var pe *problem.Error
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return ErrUnavailable.Wrap(err)
}
