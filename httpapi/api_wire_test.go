package httpapi_test

import (
	"bytes"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestAPIEndorsementsAlwaysAnArray: `endorsements` is [] when empty in every
// record the API returns, after a cancel and after a review-timeout pass-up
// too, never null (SPEC §4, the record).
func TestAPIEndorsementsAlwaysAnArray(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	prog, child := newClient(t, url, tokProg), newClient(t, url, tokQuickChild)
	wantArray := func(what string, raw []byte) {
		t.Helper()
		if !bytes.Contains(raw, []byte(`"endorsements":[]`)) {
			t.Errorf("%s: %s, want \"endorsements\":[]", what, raw)
		}
	}

	rec := prog.pending()
	cancelled := prog.do("POST", "/v1/requests/"+str(rec["id"])+"/cancel", nil).want(t, "cancel", http.StatusOK)
	wantArray("cancel answer", cancelled.raw)
	wantArray("cancelled record", prog.do("GET", "/v1/requests/"+str(rec["id"]), nil).raw)

	up := child.pending()
	eventually(t, 10*time.Second, "review timeout passes the request up", func() bool {
		return jsonString(child.get(str(up["id"]))["approver"]) == `{"id":"u-1","kind":"person"}`
	})
	wantArray("passed-up record", child.do("GET", "/v1/requests/"+str(up["id"]), nil).raw)
	wantArray("passed-up record in the inbox", newClient(t, url, tokPerson).do("GET", "/v1/requests?status=pending", nil).raw)
}

// TestAPIInboxLeavesOutOwnCancelled: the inbox holds the requests waiting
// for the caller and those it answered or endorsed (SPEC §5); a requester's
// own cancel is no answer, and a cancelled request leaves its approver's
// pending inbox for its history (issue 22: what ended while waiting on you).
func TestAPIInboxLeavesOutOwnCancelled(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	prog, main := newClient(t, url, tokProg), newClient(t, url, tokMain)
	rec := prog.pending()
	id := str(rec["id"])
	if items, _, _ := main.list(""); !slices.Contains(ids(items), id) {
		t.Fatalf("approver agt_main's inbox %v lacks the pending %s", ids(items), id)
	}
	prog.do("POST", "/v1/requests/"+id+"/cancel", nil).want(t, "cancel", http.StatusOK)
	for _, tc := range []struct {
		name, query string
		c           *client
		want        bool
	}{
		{"requester", "", prog, false},
		{"former approver, pending", "?status=pending", main, false},
		{"former approver, history", "?status=cancelled", main, true},
	} {
		items, _, r := tc.c.list(tc.query)
		r.want(t, tc.name+" inbox", http.StatusOK)
		if slices.Contains(ids(items), id) != tc.want {
			t.Errorf("the %s's inbox (%q) shows the cancelled %s: %v, want %v: %s", tc.name, tc.query, id, !tc.want, tc.want, r.raw)
		}
	}
}
