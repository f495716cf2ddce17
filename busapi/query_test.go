package busapi_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestFiltersThatDoNotParseAre400: list's, grants' and get's fields are
// HTTP's query parameters; one that does not parse (a malformed cursor,
// limit, status or wait) is 400 InvalidRequest naming it, never ignored
// (SPEC §5).
func TestFiltersThatDoNotParseAre400(t *testing.T) {
	e := start(t, acmeYAML)
	id := str(e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated).body["id"])
	paged := []struct {
		body  obj
		field string
	}{
		{obj{"cursor": "%%%garbage"}, "cursor"},
		{obj{"cursor": "Z2FyYmFnZQ"}, "cursor"}, // base64 of "garbage": not an id this server issued
		{obj{"cursor": 7}, "cursor"},
		{obj{"limit": 0}, "limit"},
		{obj{"limit": -1}, "limit"},
		{obj{"limit": 501}, "limit"},
		{obj{"limit": 1.5}, "limit"},
		{obj{"limit": "abc"}, "limit"},
	}
	for _, op := range []string{"list", "grants"} {
		for _, c := range paged {
			e.req("acme", op, tokPerson, c.body).wantProblem(t, fmt.Sprintf("%s %v", op, c.body), http.StatusBadRequest, "InvalidRequest", c.field)
		}
	}
	for _, s := range []any{"bogus", "pending,Approved", 3} {
		e.req("acme", "list", tokPerson, obj{"status": s}).wantProblem(t, "list status", http.StatusBadRequest, "InvalidRequest", "status")
	}
	for _, w := range []any{"abc", "-1s", "5", 30} {
		e.req("acme", "get", tokMain, obj{"id": id, "wait": w}).wantProblem(t, "get wait", http.StatusBadRequest, "InvalidRequest", "wait")
	}
}
