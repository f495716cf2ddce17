package audit

import (
	"testing"
	"time"
)

// BenchmarkSeal: one entry of a typical request record (about 900 bytes).
func BenchmarkSeal(b *testing.B) {
	data := []byte(`{"id":"req_01JABCDEFGHJKMNPQRSTVWXYZ0","tenant":"acme","agent":"agt_main","session":"s-1","turn":"t-1","tool_call_id":"c-1","capability":{"action":"tools.call","target":"refund"},"tool":"refund","arguments":{"amount":120,"currency":"GBP","order":"A-1234"},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"customer asked","call_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","timeout":"24h","status":"approved","approver":{"kind":"person","id":"u-1"},"chain":["agt_main"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":2,"created_at":"2026-12-02T01:00:00Z","deadline_at":"2026-12-03T01:00:00Z","claimed_at":null,"decision":{"status":"approved","by":{"kind":"person","id":"u-1"},"scope":"once","decided_at":"2026-12-02T01:00:01Z"},"required_approvals":1,"approvals":[]}`)
	for b.Loop() {
		e := Entry{Seq: 7, At: time.Now(), Tenant: "acme", Type: "dev.countersign.request.decided", Actor: Actor{Kind: "person", ID: "u-1"}, Subject: "req_01JABCDEFGHJKMNPQRSTVWXYZ0", Data: data, Prev: ZeroHash}
		if _, err := Seal(&e); err != nil {
			b.Fatal(err)
		}
	}
}
