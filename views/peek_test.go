package views

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/countersign/countersign/domain"
)

// The replay's scanner reads exactly what encoding/json reads, or gives up
// (and encoding/json reads the record): never something different.
func TestScanTerminalMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	base := benchTerminal(t)
	var cases [][]byte
	for i := range 500 {
		var r domain.Request
		if err := json.Unmarshal(base, &r); err != nil {
			t.Fatal(err)
		}
		r.Tenant = domain.TenantID(pick("demo", "acme", `we"ird`, "t\u00e9"))
		r.Agent = domain.AgentID(pick("agt_a", "agt_programmer", `a\b`, "agt_\u2028x"))
		r.Status = domain.Status(pick("approved", "denied", "expired", "cancelled", "pending"))
		r.Revision = rng.Uint64N(1 << 40)
		r.Arguments = json.RawMessage(pick(`{}`, `{"s":"}]\"{[","n":[1,{"a":"b"}]}`, `[1,2,"x\\\""]`))
		switch rng.IntN(3) {
		case 0:
			r.Decision = nil
		case 1:
			r.Decision.By = domain.Ref{Kind: pick("person", "agent", "grant", "deadline"), ID: pick("u-1", "", `q"uote`)}
		}
		// (not from rng: the other fields keep their draws)
		r.Approver = []*domain.Ref{nil, {Kind: "person", ID: "u-1"}, {Kind: "agent", ID: "agt_main"}, {Kind: "group", ID: "fin"}, {Kind: "deadline"}}[i%5]
		r.Endorsements, r.Abstentions = nil, nil
		for range rng.IntN(3) {
			r.Endorsements = append(r.Endorsements, domain.Endorsement{Agent: domain.AgentID(pick("agt_main", "agt_x"))})
		}
		for range rng.IntN(2) {
			r.Abstentions = append(r.Abstentions, domain.Endorsement{Agent: "agt_y"})
		}
		r.Approvals = nil
		for range rng.IntN(3) {
			r.Approvals = append(r.Approvals, domain.Approval{By: domain.Ref{Kind: "person", ID: pick("u-1", "u-2")}, Scope: "once"})
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, b)
		var spaced bytes.Buffer
		if err := json.Indent(&spaced, b, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, spaced.Bytes())
	}
	cases = append(cases, []byte(`{}`), []byte(` { } `), []byte(`{"status":"approved","decision":null,"endorsements":[]}`),
		[]byte(`{"status":"approved"`), []byte(`{"status":"approved"}x`), []byte(`[]`), []byte(`{"status":1}`),
		[]byte(`{"revision":-1}`), []byte(`{"decision":{"by":[]}}`), []byte(`{"approver":null}`), []byte(`{"approver":{"kind":"person","id":"u-1","x":[1]}}`), []byte(`{"approver":"u-1"}`), []byte(`{"endorsements":[{"agent":"a"} {"agent":"b"}]}`))
	scanned := 0
	for _, c := range cases {
		got, ok := scanTerminal(c)
		if !ok {
			continue
		}
		scanned++
		var want peekedRequest
		if err := json.Unmarshal(c, &want); err != nil {
			t.Fatalf("scanned %s, which encoding/json refuses: %v", c, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scan of %s:\n got %+v\nwant %+v", c, got, want)
		}
	}
	if scanned < len(cases)/3 {
		t.Fatalf("the scanner read only %d of %d records", scanned, len(cases))
	}
}
