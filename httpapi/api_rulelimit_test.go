package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// A rule given with an answer obeys the rules API's limits (SPEC §5): a
// rule over 4096 bytes, or a blank one, is 400 field rule; the request
// stays pending at its revision and no rule is kept. 4096 bytes is kept,
// and the rules API refuses 4097 (field text).
func TestAPIAnswerRuleLimits(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rules := func() int {
		return len(objects(person.do("GET", "/v1/agents/agt_main/rules", nil).want(t, "rules", http.StatusOK).body["items"]))
	}
	before := rules()
	rec := main.pending()
	for name, text := range map[string]string{"4097 bytes": strings.Repeat("r", 4097), "900 KB": strings.Repeat("r", 900<<10), "blank": " \t "} {
		person.answer(rec, "allow", "once", "rule", text).wantProblem(t, name, http.StatusBadRequest, "InvalidRequest", "rule")
	}
	got := person.do("GET", "/v1/requests/"+str(rec["id"]), nil).want(t, "get", http.StatusOK).body
	if got["status"] != "pending" || num(got["revision"]) != 0 || rules() != before {
		t.Fatalf("refused answers changed something: %v at %v, %d rules (had %d)", got["status"], got["revision"], rules(), before)
	}
	person.do("POST", "/v1/agents/agt_main/rules", map[string]any{"text": strings.Repeat("r", 4097)}).
		wantProblem(t, "rules API, 4097 bytes", http.StatusBadRequest, "InvalidRequest", "text")
	person.answer(rec, "allow", "once", "rule", strings.Repeat("r", 4096)).want(t, "a 4096-byte rule", http.StatusOK)
	if rules() != before+1 {
		t.Fatalf("the 4096-byte rule was not kept: %d rules (had %d)", rules(), before)
	}
}
