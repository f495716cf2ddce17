package domain

// The call digest as it was before the single-pass writer: kept here only,
// as the oracle the differential test and the benchmark compare CallDigest
// with. Its arguments go through jcs.Canonicalize, which package jcs
// checks against the encoding/json canonicalizer it replaced.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/countersign/countersign/jcs"
)

// oldCallDigest returns "sha256:" and the lowercase hex SHA-256 of the JCS
// canonical JSON of b. It fails only if b.Arguments is not strict JSON.
//
// The canonical form is written directly: the members in RFC 8785 order
// (agent, arguments, capability{action, target}, connection{id, revision}
// or null, session, tenant, tool_call_id, turn), the arguments
// canonicalized on their own.
func oldCallDigest(b CallBinding) (string, error) {
	args := []byte(b.Arguments)
	if len(args) == 0 {
		args = []byte("null")
	}
	canonArgs, err := jcs.Canonicalize(args)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	buf.Grow(len(canonArgs) + 256)
	member := func(first bool, key string) {
		if !first {
			buf.WriteByte(',')
		}
		oldWriteJCSString(&buf, key)
		buf.WriteByte(':')
	}
	buf.WriteByte('{')
	member(true, "agent")
	oldWriteJCSString(&buf, b.Agent)
	member(false, "arguments")
	buf.Write(canonArgs)
	member(false, "capability")
	buf.WriteByte('{')
	member(true, "action")
	oldWriteJCSString(&buf, b.Capability.Action)
	member(false, "target")
	oldWriteJCSString(&buf, b.Capability.Target)
	buf.WriteByte('}')
	member(false, "connection")
	if c := b.Connection; c != nil {
		buf.WriteByte('{')
		member(true, "id")
		oldWriteJCSString(&buf, c.ID)
		member(false, "revision")
		buf.WriteString(oldFormatES6(float64(c.Revision)))
		buf.WriteByte('}')
	} else {
		buf.WriteString("null")
	}
	for _, kv := range [][2]string{{"session", b.Session}, {"tenant", b.Tenant}, {"tool_call_id", b.ToolCallID}, {"turn", b.Turn}} {
		member(false, kv[0])
		oldWriteJCSString(&buf, kv[1])
	}
	buf.WriteByte('}')
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func oldWriteJCSString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// oldFormatES6 formats f the way ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3).
func oldFormatES6(f float64) string {
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// BenchmarkCallDigest compares CallDigest with the hand-written writer it
// replaced.
func BenchmarkCallDigest(b *testing.B) {
	bind := CallBinding{Tenant: "acme", Agent: "agt_programmer", Session: "ses-01", Turn: "t-7", ToolCallID: "call_abc123",
		Capability: Capability{Action: "tools.call", Target: "issue_refund"},
		Arguments:  []byte(`{"payment_id":"payment_123","amount":4900,"currency":"GBP","note":"Duplicate charge"}`)}
	for _, f := range []struct {
		name   string
		digest func(CallBinding) (string, error)
	}{{"old", oldCallDigest}, {"new", CallDigest}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.digest(bind); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
