package wire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/problem"
)

// MaxWait caps a long-poll (SPEC §5).
const MaxWait = 60 * time.Second

// MaxBody is the largest request body accepted on any surface (SPEC §5);
// larger is ErrTooLarge.
const MaxBody = 1 << 20

// Decode reads a strict JSON body into v, the same on every surface (SPEC
// §5): a JSON object, valid UTF-8, no duplicate keys, numbers an IEEE
// double holds exactly, no unknown fields, each field name byte-for-byte
// its field's (ExactNames: never folded). It returns the SHA-256 of the
// body's canonical (JCS) form, which idempotency compares. Errors:
// an InvalidRequest refusal (problem.Invalid) naming the field.
func Decode(raw []byte, v any) (string, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return "", invalid("body", "%s", "the body must be a JSON object")
	}
	canon, err := jcs.Canonicalize(raw)
	if err != nil {
		return "", invalid("body", "%s", strings.TrimPrefix(err.Error(), "jcs: "))
	}
	if err := ExactNames(canon, v); err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "", decodeError(err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// DecodeOptional is Decode for bodies that may be empty.
func DecodeOptional(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	_, err := Decode(raw, v)
	return err
}

// decodeError names the field a decode error is about.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return invalid(te.Field, "%s", "wrong type for "+te.Field+": expected "+te.Type.String())
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return invalid(f, "%s", "unknown field "+f)
	}
	return invalid("body", "%s", "malformed JSON: "+strings.TrimPrefix(msg, "json: "))
}

// ParseWait reads a long-poll's wait ("30s"; "" is no wait), capped at
// MaxWait. Errors: InvalidRequest about wait.
func ParseWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, invalid("wait", "%s", "wait must be a Go duration such as 30s")
	}
	return min(d, MaxWait), nil
}

// invalid is the 400 InvalidRequest refusal about field.
func invalid(field, format string, args ...any) *problem.Error {
	return problem.Invalid(field, fmt.Sprintf(format, args...))
}
