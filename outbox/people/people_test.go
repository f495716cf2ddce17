package people

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/countersign/countersign/domain"
)

// peopleRecord's one-pass decode reads what json.Unmarshal reads, whatever
// the members' order, spacing and escapes, and refuses what is no record.
func TestPeopleRecordDecodesAsJSON(t *testing.T) {
	u1 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	full := domain.Request{ID: "req_1", Tenant: "acme", Status: domain.StatusApproved, Approver: &u1, Revision: 12,
		Reason: `a "quoted" \ reason, {braces} [brackets], and a comma`, Arguments: json.RawMessage(`{"a":[1,{"b":"}"}],"c":"\"]"}`),
		Approvals: domain.Approvals{{By: u1, Scope: domain.ScopeOnce}},
		Decision:  &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindGroup, ID: "fin\u00e9"}}}
	enc, _ := json.Marshal(full)
	pending, _ := json.Marshal(domain.Request{ID: "req_2", Tenant: "acme", Status: domain.StatusPending})
	for _, data := range []string{
		string(enc), string(pending),
		`{}`,
		` { "revision" : 7 , "id" : "req_\u0041\n" , "status":"pending", "approver" : { "id" : "u-\"2\"", "kind" : "person" } , "approvals" : [ ] , "decision" : null } `,
		`{"decision":{"by":{"kind":"person","id":"u-1"},"status":"denied"},"status":"denied","tenant":"t\\u"}`,
		`{"approver":null,"x":[{"approver":{"kind":"agent"}}],"id":"req_3"}`,
	} {
		var want, got peopleRecord
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if err := got.decode([]byte(data)); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		w, _ := json.Marshal(want.request())
		g, _ := json.Marshal(got.request())
		if !bytes.Equal(w, g) {
			t.Errorf("decoded\n%s\nwant\n%s", g, w)
		}
	}
	for _, bad := range []string{``, `null`, `[]`, `"req"`, `{"id":"req_1"`, `{"id":"req_1",`, `{"id" "req_1"}`, `{"revision":"x"}`, `{"approver":{"kind":1}}`, `{id:1}`} {
		var pr peopleRecord
		if pr.decode([]byte(bad)) == nil {
			t.Errorf("%q decoded: want it refused", bad)
		}
	}
}
