package httpapi_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// TestAPIGetWait: ?wait= returns at once when terminal, the pending record
// (200) when the wait elapses, and wakes as soon as a decider answers.
func TestAPIGetWait(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)

	read := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	start := time.Now()
	r := main.do("GET", "/v1/requests/"+str(read["id"])+"?wait=30s", nil).want(t, "wait on a terminal request", http.StatusOK)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("wait on a terminal request took %v, want at once", el)
	}
	if str(r.body["status"]) != "approved" {
		t.Errorf("status %v, want approved", r.body["status"])
	}
	// Waits over 60s are capped, not refused.
	main.do("GET", "/v1/requests/"+str(read["id"])+"?wait=10m", nil).want(t, "wait=10m on a terminal request", http.StatusOK)

	pend := main.pending()
	id := str(pend["id"])
	start = time.Now()
	r = main.do("GET", "/v1/requests/"+id+"?wait=1s", nil).want(t, "wait that elapses", http.StatusOK)
	if el := time.Since(start); el < 900*time.Millisecond || el > 5*time.Second {
		t.Errorf("wait=1s returned after %v, want about 1s", el)
	}
	if str(r.body["status"]) != "pending" || num(r.body["revision"]) != 0 {
		t.Errorf("after the wait: status %v revision %v, want pending 0", r.body["status"], r.body["revision"])
	}
	// A poll never creates or extends anything.
	if got := main.get(id)["deadline_at"]; got != pend["deadline_at"] {
		t.Errorf("deadline_at moved from %v to %v after a poll", pend["deadline_at"], got)
	}

	done := make(chan resp, 1)
	start = time.Now()
	go func() { done <- main.do("GET", "/v1/requests/"+id+"?wait=30s", nil) }()
	waitHeld(t, url, 1)
	person.answer(pend, "allow", "once").want(t, "answer", http.StatusOK)
	select {
	case r := <-done:
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("the wait woke after %v, want soon after the answer", el)
		}
		if r.status != http.StatusOK || str(r.body["status"]) != "approved" {
			t.Errorf("woken wait: %d %v, want 200 approved", r.status, r.body["status"])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the wait did not wake within 20s of the answer")
	}

	for _, w := range []string{"soon", "-1s", "30"} {
		main.do("GET", "/v1/requests/"+id+"?wait="+w, nil).wantProblem(t, "wait="+w, http.StatusBadRequest, "InvalidRequest", "wait")
	}
	// An invalid wait on a missing id: 400 comes before 404.
	main.do("GET", "/v1/requests/req_01JC0000000000000000000000?wait=soon", nil).wantProblem(t, "bad wait on missing id", http.StatusBadRequest, "InvalidRequest", "wait")
}

// TestAPIGetVisibility: the requester, the agents in its chain, its member
// and admin see a request; everyone else gets 404 exactly as for a
// missing id (SPEC §5).
func TestAPIGetVisibility(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	rec := newClient(t, url, tokProg).pending()
	path := "/v1/requests/" + str(rec["id"])
	missing := newClient(t, url, tokPerson2).do("GET", "/v1/requests/req_01JC0000000000000000000000", nil)
	for _, tc := range []struct {
		name, token string
		sees        bool
	}{
		{"requester", tokProg, true},
		{"chain agent above", tokMain, true},
		{"member", tokPerson, true},
		{"member, read-only token", tokPersonRO, true},
		{"admin", tokAdmin, true},
		{"agent below the requester", tokSub, false},
		{"agent outside the chain, same member", tokQuickChild, false},
		{"agent of another member", tokOther, false},
		{"another member's person", tokPerson2, false},
		{"another tenant", tokX, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{path, path + "?wait=1ms"} {
				r := newClient(t, url, tc.token).do("GET", p, nil)
				if tc.sees {
					r.want(t, p, http.StatusOK)
					if r.body["id"] != rec["id"] {
						t.Errorf("got id %v, want %v", r.body["id"], rec["id"])
					}
					continue
				}
				r.wantProblem(t, p, http.StatusNotFound, "RequestNotFound", "")
				if str(r.body["detail"]) != str(missing.body["detail"]) || str(r.body["title"]) != str(missing.body["title"]) {
					t.Errorf("not visible %s differs from missing %s", r.raw, missing.raw)
				}
			}
		})
	}
}

// TestAPIGetWaitIgnoresEscalation: a long-poll returns when the status is
// terminal or the wait elapses (SPEC §5); an escalation keeps the request
// pending and so does not end the wait.
func TestAPIGetWaitIgnoresEscalation(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog := newClient(t, url, tokSub), newClient(t, url, tokProg)
	rec := sub.pending()
	done := make(chan resp, 1)
	start := time.Now()
	go func() { done <- sub.do("GET", "/v1/requests/"+str(rec["id"])+"?wait=2s", nil) }()
	waitHeld(t, url, 1)
	prog.answer(rec, "allow", "").want(t, "endorse", http.StatusOK)
	r := <-done
	el := time.Since(start)
	if r.status != http.StatusOK || str(r.body["status"]) != "pending" {
		t.Fatalf("wait: %d %v, want 200 pending", r.status, r.body["status"])
	}
	if el < 1900*time.Millisecond {
		t.Errorf("wait=2s returned after %v on an escalation (revision %v); want it to run until terminal or 2s", el, r.body["revision"])
	}
}

// A write's answer is the record's stored JSON, not encoded again: the
// same bytes a later GET encodes from what it reads, for a request
// decided at once and for one a person answers.
func TestAPIWriteAnswersAreTheStoredRecord(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	same := func(what string, r resp) {
		t.Helper()
		id := str(r.body["id"])
		got := main.do("GET", "/v1/requests/"+id, nil).want(t, "get "+what, http.StatusOK)
		if !bytes.Equal(r.raw, got.raw) {
			t.Errorf("%s answered\n%s\nGET gives\n%s", what, r.raw, got.raw)
		}
		if r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", what, r.header.Get("Content-Type"))
		}
	}
	args := `{ "path": "<a&b>/é",  "n": 1.50 }`
	r := main.do("POST", "/v1/requests", `{"tool":"read_file","arguments":`+args+`}`).want(t, "submit", http.StatusCreated)
	if str(r.body["status"]) != "approved" {
		t.Fatalf("read_file: %v, want approved at once", r.body["status"])
	}
	same("a submit decided at once", r)
	pend := main.pending()
	same("an answer", person.answer(pend, "allow", "once").want(t, "answer", http.StatusOK))
}
