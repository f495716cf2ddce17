package httpapi_test

import (
	"net/http"
	"testing"
)

// TestAPIExactFieldNames: a field name matches only byte-for-byte (SPEC
// §5). "DECISION" beside "decision" was taken as the decision (encoding/json
// folds case, and 'ſ' U+017F to 's', U+212A to 'k'): now every such name
// is an unknown field, 400 naming it, and the request is left as it was.
func TestAPIExactFieldNames(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending()
	id := str(rec["id"])
	for _, tc := range []struct {
		name, path, body, field string
		c                       *client
	}{
		{"DECISION beside decision", "/v1/requests/" + id, `{"expected":0,"decision":"deny","DECISION":"allow"}`, "DECISION", person},
		{"Decision alone", "/v1/requests/" + id, `{"expected":0,"Decision":"allow"}`, "Decision", person},
		{"Expected", "/v1/requests/" + id, `{"Expected":0,"decision":"allow"}`, "Expected", person},
		{"long s in scope", "/v1/requests/" + id, `{"expected":0,"decision":"allow","ſcope":"lifetime"}`, "ſcope", person},
		{"Tool", "/v1/requests", `{"Tool":"deploy","arguments":{}}`, "Tool", main},
		{"Arguments", "/v1/requests", `{"tool":"deploy","Arguments":{}}`, "Arguments", main},
		{"long s in session", "/v1/requests", `{"tool":"deploy","arguments":{},"ſession":"ses-1"}`, "ſession", main},
		{"escaped long s", "/v1/requests", `{"tool":"deploy","arguments":{},"\u017fession":"ses-1"}`, "ſession", main},
		{"Kelvin sign in subject", "/v1/requests", `{"tool":"Bash","arguments":{"command":"ls"},"subject":{"\u212aind":"shell"}}`, "subject.\u212aind", main},
		{"connection ID", "/v1/requests", `{"capability":{"action":"apps.call","target":"conn-7/list"},"arguments":{},"connection":{"ID":"conn-7"}}`, "connection.ID", main},
		{"capability Target", "/v1/requests", `{"capability":{"action":"tools.call","Target":"deploy"},"arguments":{}}`, "capability.Target", main},
		{"CALL_DIGEST", "/v1/requests/" + id + "/claim", `{"CALL_DIGEST":"` + str(rec["call_digest"]) + `"}`, "CALL_DIGEST", main},
		{"rule Text", "/v1/agents/agt_main/rules", `{"Text":"never deploy on Fridays"}`, "Text", person},
		{"register Role", "/v1/agents", `{"Role":"helper"}`, "Role", main},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.do("POST", tc.path, tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	if got := person.get(id); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Errorf("refused bodies changed the request: %v at revision %v", got["status"], got["revision"])
	}
	if got := adminCount(t, url); got != 1 {
		t.Errorf("refused bodies: admin sees %d requests, want 1", got)
	}
	// Keys of the call's own arguments are the tool's: any case, any script.
	body := `{"tool":"deploy","arguments":{"Tool":1,"ſession":{"DECISION":"allow"}}}`
	main.do("POST", "/v1/requests", body).want(t, "free keys in arguments", http.StatusCreated)
}
