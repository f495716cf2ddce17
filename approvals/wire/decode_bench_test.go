package wire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/jcs"
)

// BenchmarkDecode decodes submit bodies whose arguments are about 200 B,
// 10 KiB and 1 MiB, and an answer body; names- is ExactNames alone, on the
// canonical form.
func BenchmarkDecode(b *testing.B) {
	note := func(n int) string { return strings.Repeat("refund of a duplicate charge ", n/29+1)[:n] }
	bodies := []struct {
		name string
		body string
		v    func() any
	}{
		{"answer", `{"expected":3,"decision":"allow","scope":"session","reason":"ok"}`, func() any { return new(approvals.AnswerInput) }},
	}
	for _, n := range []int{200, 10 << 10, 1<<20 - 300} {
		body := fmt.Sprintf(`{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900,"items":[{"sku":"a-1","n":2},{"sku":"b-2","n":1}],"note":%q},"reason":"Duplicate charge.","session":"ses-1","connection":{"id":"conn-7","revision":3}}`, note(n))
		bodies = append(bodies, struct {
			name string
			body string
			v    func() any
		}{fmt.Sprintf("submit-%dB", len(body)), body, func() any { return new(domain.Submission) }})
	}
	for _, c := range bodies {
		raw := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := wire.Decode(raw, c.v()); err != nil {
					b.Fatal(err)
				}
			}
		})
		canon, err := jcs.Canonicalize(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("names-"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(canon)))
			b.ReportAllocs()
			v := c.v()
			for b.Loop() {
				if err := wire.ExactNames(canon, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
