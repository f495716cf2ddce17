package httpapi_test

import (
	"net/http"
	"testing"
)

// TestAPIQueryThatDoesNotParseIs400: a query parameter that does not parse
// (a malformed cursor, limit, status or wait, percent-encoding that does
// not decode, a parameter given twice) is 400 InvalidRequest naming it on
// every list and get, never ignored (SPEC §5).
func TestAPIQueryThatDoesNotParseIs400(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	id := str(main.pending()["id"])
	cases := []struct{ query, field string }{
		{"cursor=%%%garbage", "cursor"},
		{"cursor=%zz", "cursor"},
		{"cursor=Z2FyYmFnZQ", "cursor"}, // base64 of "garbage": not an id this server issued
		{"cursor=!!!", "cursor"},
		{"cursor=cmVxXzAx&cursor=cmVxXzAx", "cursor"},
		{"limit=%G1", "limit"},
		{"limit=abc", "limit"},
		{"limit=0", "limit"},
		{"limit=-1", "limit"},
		{"limit=501", "limit"},
		{"limit=1.5", "limit"},
		{"limit=5&limit=abc", "limit"},
		{"%zz=1", "%zz"},
	}
	for _, path := range []string{"/v1/requests", "/v1/grants"} {
		for _, c := range cases {
			person.do("GET", path+"?"+c.query, nil).wantProblem(t, path+"?"+c.query, http.StatusBadRequest, "InvalidRequest", c.field)
		}
	}
	for _, c := range []struct{ query, field string }{
		{"status=%", "status"}, {"status=bogus", "status"}, {"status=pending,Approved", "status"}, {"status=pending&status=denied", "status"},
	} {
		person.do("GET", "/v1/requests?"+c.query, nil).wantProblem(t, c.query, http.StatusBadRequest, "InvalidRequest", c.field)
	}
	for _, c := range []struct{ query, field string }{
		{"wait=%%%", "wait"}, {"wait=abc", "wait"}, {"wait=-1s", "wait"}, {"wait=5", "wait"}, {"wait=1s&wait=2s", "wait"},
	} {
		main.do("GET", "/v1/requests/"+id+"?"+c.query, nil).wantProblem(t, c.query, http.StatusBadRequest, "InvalidRequest", c.field)
	}
	// What parses still answers: an empty value is no value, encoded
	// commas split statuses, a wait of 0s does not wait.
	person.do("GET", "/v1/requests?status=pending%2Capproved&limit=&cursor=", nil).want(t, "encoded query", http.StatusOK)
	person.do("GET", "/v1/grants?limit=500&", nil).want(t, "grants", http.StatusOK)
	main.do("GET", "/v1/requests/"+id+"?wait=0s", nil).want(t, "wait=0s", http.StatusOK)
}
