package audit

import (
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/tlog"
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

// BenchmarkEntry: what the writer does for one request write it reads,
// from the stored message to its sealed line and tree hashes.
func BenchmarkEntry(b *testing.B) {
	h := nats.Header{}
	id := "req_01JABCDEFGHJKMNPQRSTVWXYZ0"
	events.ChangeHeaders(h, events.TypeRequestDecided, "acme", id, 2, time.Now(), "")
	m := sourceMsg{src: 0, seq: 9, subject: "$KV.requests.acme." + id, header: h, data: benchRecord(id), at: time.Now()}
	var mp mapper
	var tr grown
	tr.tl = &tenantLog{}
	for b.Loop() {
		for _, c := range mp.changes(m) {
			e := c.entry
			e.Seq, e.Prev = uint64(tr.count+1), ZeroHash
			line, err := appendSeal(nil, &e, c.canonical)
			if err != nil {
				b.Fatal(err)
			}
			hs, err := tlog.StoredHashes(tr.count, line, &tr)
			if err != nil {
				b.Fatal(err)
			}
			tr.hashes, tr.count = append(tr.hashes, hs...), tr.count+1
		}
	}
}
