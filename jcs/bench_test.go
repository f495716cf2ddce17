package jcs

import (
	"fmt"
	"strings"
	"testing"
)

// benchBody is a typical submit body, about 300 bytes.
const benchBody = `{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900,` +
	`"currency":"GBP","customer":{"id":"cus_8812","email":"jane@example.com"},"note":"Duplicate charge\non 2026-11-02"},` +
	`"reason":"The customer was charged twice for order 5561.","session":"ses-01","turn":"t-7","tool_call_id":"call_abc123"}`

// benchRecord is a stored request record, about 900 bytes, its members in
// the order its encoder writes them: the audit log canonicalizes one for
// every change.
const benchRecord = `{"id":"req_01JABCDEFGHJKMNPQRSTVWXYZ0","tenant":"acme","agent":"agt_main","session":"s-1","turn":"t-1","tool_call_id":"c-1",` +
	`"capability":{"action":"tools.call","target":"refund"},"tool":"refund","arguments":{"amount":120,"currency":"GBP","order":"A-1234"},` +
	`"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"customer asked",` +
	`"call_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","timeout":"24h","status":"approved",` +
	`"approver":{"kind":"person","id":"u-1"},"chain":["agt_main"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,` +
	`"revision":2,"created_at":"2026-12-02T01:00:00Z","deadline_at":"2026-12-03T01:00:00Z","claimed_at":null,` +
	`"decision":{"status":"approved","by":{"kind":"person","id":"u-1"},"scope":"once","decided_at":"2026-12-02T01:00:01Z"},` +
	`"required_approvals":1,"approvals":[]}`

// benchBigBody is a 64 KiB body: unsorted keys, nesting, escapes and
// numbers of every kind.
var benchBigBody = func() []byte {
	var b strings.Builder
	b.WriteString(`{"tool":"bulk_import","arguments":{"rows":[`)
	for i := 0; b.Len() < 64<<10-200; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%05d","qty":%d,"price":%d.25,"tags":["a","b\u00e9"],"w":1e-3,"name":"Item \"%d\"","ok":true}`, i, i%97, i%500, i)
	}
	b.WriteString(`]},"reason":"nightly import"}`)
	return []byte(b.String())
}()

func benchCanonicalize(b *testing.B, canon func([]byte) ([]byte, error), raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := canon(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalize compares the single-pass canonicalizer with the
// encoding/json one it replaced, on a typical body, a stored record and a
// 64 KiB body.
func BenchmarkCanonicalize(b *testing.B) {
	for _, body := range []struct {
		name string
		raw  []byte
	}{{"300B", []byte(benchBody)}, {"record", []byte(benchRecord)}, {"64KiB", benchBigBody}} {
		b.Run("old/"+body.name, func(b *testing.B) { benchCanonicalize(b, oldCanonicalize, body.raw) })
		b.Run("new/"+body.name, func(b *testing.B) { benchCanonicalize(b, Canonicalize, body.raw) })
	}
}
