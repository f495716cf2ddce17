package httpapi_test

import (
	"net/http"
	"reflect"
	"sort"
	"testing"
	"time"
)

// TestAPIListInbox: the caller's inbox holds requests whose current
// approver is the caller and those it answered or endorsed; filters
// status (comma-separated) and agent (SPEC §5).
func TestAPIListInbox(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, prog, sub, other := newClient(t, url, tokMain), newClient(t, url, tokProg), newClient(t, url, tokSub), newClient(t, url, tokOther)
	person, person2 := newClient(t, url, tokPerson), newClient(t, url, tokPerson2)

	fromMain := main.pending()                                                      // approver person u-1
	fromProg := prog.pending()                                                      // approver agt_main
	fromSub := sub.pending()                                                        // approver agt_programmer
	fromSub2 := sub.pending()                                                       // approver agt_programmer, later endorsed
	fromOther := other.pending()                                                    // approver person u-2
	main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}}) // auto-approved: nobody's inbox
	denied := main.pending()
	person.answer(denied, "deny", "").want(t, "deny", http.StatusOK)
	prog.answer(fromSub2, "allow", "").want(t, "programmer endorses", http.StatusOK) // now approver agt_main

	id := func(m map[string]any) string { return str(m["id"]) }
	for _, tc := range []struct {
		name  string
		c     *client
		query string
		want  []string
	}{
		{"person", person, "", []string{id(fromMain), id(denied)}},
		{"person, pending", person, "?status=pending", []string{id(fromMain)}},
		{"person, denied", person, "?status=denied", []string{id(denied)}},
		{"person, pending or denied", person, "?status=pending,denied", []string{id(fromMain), id(denied)}},
		{"person, approved", person, "?status=approved", nil},
		{"another member's person", person2, "", []string{id(fromOther)}},
		{"agt_main", main, "", []string{id(fromProg), id(fromSub2)}},
		{"agt_main, agent filter", main, "?agent=agt_sub", []string{id(fromSub2)}},
		{"agt_main, agent filter no match", main, "?agent=agt_nobody", nil},
		{"agt_programmer: waiting and endorsed", prog, "", []string{id(fromSub), id(fromSub2)}},
		{"agt_programmer, pending and agent", prog, "?status=pending&agent=agt_sub", []string{id(fromSub), id(fromSub2)}},
		{"agt_sub decides nothing", sub, "", nil},
		{"admin sees the tenant", newClient(t, url, tokAdmin), "?status=pending&agent=agt_sub", []string{id(fromSub), id(fromSub2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, next, r := tc.c.list(tc.query)
			r.want(t, "list "+tc.query, http.StatusOK)
			if _, ok := r.body["items"].([]any); !ok {
				t.Errorf("items is not an array: %s", r.raw)
			}
			if next != "" {
				t.Errorf("next_cursor %q on the last page", next)
			}
			if _, ok := r.body["next_cursor"]; ok {
				t.Errorf("next_cursor present at the end: %s", r.raw)
			}
			got := ids(items)
			want := append([]string{}, tc.want...)
			sort.Strings(want)
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("items = %v, want %v", got, want)
			}
		})
	}
}

// TestAPIListPaging: limit default 50 and max 500, cursor paging, oldest
// first, next_cursor absent at the end; a bad limit, cursor or status is
// 400.
func TestAPIListPaging(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	var want []string
	for i := 0; i < 53; i++ {
		want = append(want, str(main.pending("arguments", map[string]any{"i": i})["id"]))
	}

	items, next, r := person.list("")
	r.want(t, "default page", http.StatusOK)
	if len(items) != 50 || next == "" {
		t.Fatalf("default page: %d items, next %q; want 50 and a cursor", len(items), next)
	}
	rest, next2, r := person.list("?cursor=" + next)
	r.want(t, "second page", http.StatusOK)
	if len(rest) != 3 || next2 != "" {
		t.Errorf("second page: %d items, next %q; want 3 and none", len(rest), next2)
	}
	if got := append(ids(items), ids(rest)...); !reflect.DeepEqual(got, want) {
		t.Errorf("default paging is not oldest first in submission order:\n got %v\nwant %v", got, want)
	}
	prev := ""
	for _, it := range append(items, rest...) {
		if c := str(it["created_at"]); c < prev {
			t.Errorf("created_at %s after %s: not oldest first", c, prev)
		} else {
			prev = c
		}
	}

	var got []string
	cursor, pages := "", 0
	for {
		q := "?limit=7"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		items, next, r := person.list(q)
		r.want(t, "page "+q, http.StatusOK)
		if len(items) > 7 {
			t.Fatalf("page of %d items with limit 7", len(items))
		}
		got = append(got, ids(items)...)
		pages++
		if next == "" || pages > 20 {
			break
		}
		cursor = next
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limit=7 pages:\n got %v\nwant %v", got, want)
	}
	if pages != 8 {
		t.Errorf("%d pages of 7 for 53 items, want 8", pages)
	}
	if items, _, r := person.list("?limit=500"); r.status != http.StatusOK || len(items) != 53 {
		t.Errorf("limit=500: %d, %d items; want 200, 53", r.status, len(items))
	}
	// Filters and paging combine.
	if items, next, _ := person.list("?limit=53&status=pending"); len(items) != 53 || next != "" {
		t.Errorf("limit=53 exactly the count: %d items, next %q; want 53 and none", len(items), next)
	}

	for _, tc := range []struct{ query, field string }{
		{"?limit=501", "limit"},
		{"?limit=0", "limit"},
		{"?limit=-1", "limit"},
		{"?limit=ten", "limit"},
		{"?cursor=not-a-cursor!", "cursor"},
		{"?status=waiting", "status"},
	} {
		_, _, r := person.list(tc.query)
		r.wantProblem(t, tc.query, http.StatusBadRequest, "InvalidRequest", tc.field)
	}
}

// TestAPIListCancelledLeavesInbox: when the requester cancels, pending
// reviews of it leave every inbox (SPEC §4, Cancel): it is no longer
// pending there, only in the history of the one it was waiting on.
func TestAPIListCancelledLeavesInbox(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog := newClient(t, url, tokSub), newClient(t, url, tokProg)
	rec := sub.pending()
	if items, _, _ := prog.list("?status=pending"); !contains(ids(items), str(rec["id"])) {
		t.Fatalf("the pending request is not in agt_programmer's inbox")
	}
	sub.do("POST", "/v1/requests/"+str(rec["id"])+"/cancel", nil).want(t, "cancel", http.StatusOK)
	if items, _, _ := prog.list("?status=pending"); contains(ids(items), str(rec["id"])) {
		t.Errorf("the cancelled request is still pending in agt_programmer's inbox")
	}
	if items, _, _ := prog.list("?status=cancelled"); !reflect.DeepEqual(ids(items), []string{str(rec["id"])}) {
		t.Errorf("agt_programmer's cancelled history %v, want the request cancelled while waiting on it", ids(items))
	}
	if items, _, _ := sub.list(""); len(items) != 0 {
		t.Errorf("the requester's own cancelled request is in its inbox: %v", ids(items))
	}
}

// TestAPIListHistoryKeepsWhatEndedWhileWaiting: a request that expired
// or was cancelled while waiting on a person stays in that person's
// inbox, with its final status; in nobody else's (SPEC §5 GET /v1/requests, docs/integrators/http-api.md "Your inbox").
func TestAPIListHistoryKeepsWhatEndedWhileWaiting(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person, person2 := newClient(t, url, tokMain), newClient(t, url, tokPerson), newClient(t, url, tokPerson2)
	expired := main.pending("timeout", "1s")
	cancelled := main.pending()
	waiting := main.pending()
	main.do("POST", "/v1/requests/"+str(cancelled["id"])+"/cancel", nil).want(t, "cancel", http.StatusOK)
	if got := main.do("GET", "/v1/requests/"+str(expired["id"])+"?wait=30s", nil).body; str(got["status"]) != "expired" {
		eventually(t, 30*time.Second, "expiry", func() bool { return str(main.get(str(expired["id"]))["status"]) == "expired" })
	}
	id := func(m map[string]any) string { return str(m["id"]) }
	for _, tc := range []struct {
		c     *client
		query string
		want  []string
	}{
		{person, "?status=expired", []string{id(expired)}},
		{person, "?status=cancelled", []string{id(cancelled)}},
		{person, "?status=approved,denied,expired,cancelled", []string{id(expired), id(cancelled)}},
		{person, "?status=pending", []string{id(waiting)}},
		{person, "", []string{id(expired), id(cancelled), id(waiting)}},
		{person2, "", nil},
		{person2, "?status=expired,cancelled", nil},
	} {
		items, _, r := tc.c.list(tc.query)
		r.want(t, "list "+tc.query, http.StatusOK)
		if got := ids(items); !reflect.DeepEqual(got, tc.want) && len(got)+len(tc.want) > 0 {
			t.Errorf("%s %q: %v, want %v", tc.c.token, tc.query, got, tc.want)
		}
	}
}
