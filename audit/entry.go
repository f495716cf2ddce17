package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/countersign/countersign/jcs"
)

// ZeroHash is the prev of a tenant's first entry: 64 zeros.
var ZeroHash = strings.Repeat("0", 64)

// Actor is who made a change: a principal's kind and id.
type Actor struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// Entry is one line of a tenant's audit log (SPEC §14).
type Entry struct {
	Seq     uint64          `json:"seq"`
	At      time.Time       `json:"at"`
	Tenant  string          `json:"tenant"`
	Type    string          `json:"type"`
	Actor   Actor           `json:"actor"`
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
	Prev    string          `json:"prev"`
	Hash    string          `json:"hash"`
}

// entryKeys are the members of an entry, hash included.
var entryKeys = []string{"seq", "at", "tenant", "type", "actor", "subject", "data", "prev", "hash"}

// Seal sets e.Hash from the other fields and returns the entry's exported
// line: its RFC 8785 form, hash included, without a newline.
//
// The members sort as actor, at, data, hash, prev, seq, subject, tenant,
// type, so the form is built from three canonical parts, data (the large
// one) canonicalized once: {actor, at}, data, {prev … type}.
func Seal(e *Entry) ([]byte, error) {
	e.At = e.At.UTC()
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("null")
	}
	head, err := canonicalOf(struct {
		Actor Actor     `json:"actor"`
		At    time.Time `json:"at"`
	}{e.Actor, e.At})
	if err != nil {
		return nil, fmt.Errorf("audit: entry %d: %w", e.Seq, err)
	}
	data, err := jcs.Canonicalize(e.Data)
	if err != nil {
		return nil, fmt.Errorf("audit: entry %d: data: %w", e.Seq, err)
	}
	tail, err := canonicalOf(struct {
		Prev    string `json:"prev"`
		Seq     uint64 `json:"seq"`
		Subject string `json:"subject"`
		Tenant  string `json:"tenant"`
		Type    string `json:"type"`
	}{e.Prev, e.Seq, e.Subject, e.Tenant, e.Type})
	if err != nil {
		return nil, fmt.Errorf("audit: entry %d: %w", e.Seq, err)
	}
	join := func(mid string) []byte {
		out := make([]byte, 0, len(head)+len(data)+len(tail)+len(mid)+8)
		out = append(append(append(out, head[:len(head)-1]...), `,"data":`...), data...)
		return append(append(append(out, mid...), ','), tail[1:]...)
	}
	sum := sha256.Sum256(join(""))
	e.Hash = hex.EncodeToString(sum[:])
	return join(`,"hash":"` + e.Hash + `"`), nil
}

func canonicalOf(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Canonicalize(raw)
}

// hashOf is the lowercase hex SHA-256 of obj's RFC 8785 form without its
// hash member.
func hashOf(obj map[string]json.RawMessage) (string, error) {
	rest := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		if k != "hash" {
			rest[k] = v
		}
	}
	c, err := canonical(rest)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

func canonical(obj map[string]json.RawMessage) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return jcs.Canonicalize(raw)
}

// appendSealCanonical is Seal for an entry whose data is already in RFC 8785
// form, the writer's case (it canonicalizes each change's data once, as
// it maps it): the line is written directly, without a second parse of
// the data or an encoding of the other members. It reports false, having
// set nothing, where a member needs the general encoding (a string with
// escapes, a time or seq a JSON encoder might refuse or round).
// It appends the line to dst, which it returns unchanged when it cannot
// (ok false).
func appendSealCanonical(dst []byte, e *Entry) (_ []byte, ok bool) {
	at := e.At.UTC()
	if y := at.Year(); y < 0 || y > 9999 || e.Seq > 1<<53 || len(e.Data) == 0 {
		return dst, false
	}
	for _, s := range [...]string{e.Actor.ID, e.Actor.Kind, e.Prev, e.Subject, e.Tenant, e.Type} {
		if !plain(s) {
			return dst, false
		}
	}
	// The members in RFC 8785 order: {actor, at, data}, hash, {prev …
	// type}; the hash is of the line without its member, and is written
	// in the room left for it once known.
	const hashKey = `,"hash":"`
	start := len(dst)
	line := slices.Grow(dst, len(e.Data)+len(e.Actor.ID)+len(e.Subject)+len(e.Tenant)+len(e.Type)+300)
	line = appendPlain(append(line, `{"actor":{"id":`...), e.Actor.ID)
	line = appendPlain(append(line, `,"kind":`...), e.Actor.Kind)
	line = append(at.AppendFormat(append(line, `},"at":"`...), time.RFC3339Nano), `","data":`...)
	line = append(line, e.Data...)
	mid := len(line)
	line = append(line, hashKey+ZeroHash+`"`...)
	rest := len(line)
	line = appendPlain(append(line, `,"prev":`...), e.Prev)
	line = strconv.AppendUint(append(line, `,"seq":`...), e.Seq, 10)
	line = appendPlain(append(line, `,"subject":`...), e.Subject)
	line = appendPlain(append(line, `,"tenant":`...), e.Tenant)
	line = append(appendPlain(append(line, `,"type":`...), e.Type), '}')
	h := sha256.New()
	h.Write(line[start:mid])
	h.Write(line[rest:])
	var sum [sha256.Size]byte
	hex.Encode(line[mid+len(hashKey):rest-1], h.Sum(sum[:0]))
	e.At, e.Hash = at, string(line[mid+len(hashKey):rest-1])
	return line, true
}

// plain reports whether RFC 8785 writes s as it is between quotes: valid
// UTF-8 without a control character, quote or backslash.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(s)
}

func appendPlain(b []byte, s string) []byte {
	return append(append(append(b, '"'), s...), '"')
}
