package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
)

// API talks to a test server over real HTTP the way a person or agent
// decider does, failing the test on transport errors.
type API struct {
	T   testing.TB
	URL string
}

// API returns a client of s for test t.
func (s *Server) API(t testing.TB) API { return API{T: t, URL: s.URL} }

// Do sends body (JSON, if not nil) with token and returns the status and
// the raw answer.
func (a API) Do(method, path, token string, body any) (int, []byte) {
	a.T.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.T.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.URL+path, rd)
	if err != nil {
		a.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// Get returns the record as token sees it.
func (a API) Get(token string, id domain.RequestID) domain.Request {
	a.T.Helper()
	code, data := a.Do(http.MethodGet, "/v1/requests/"+string(id), token, nil)
	if code != http.StatusOK {
		a.T.Fatalf("GET %s: %d %s", id, code, data)
	}
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil {
		a.T.Fatalf("GET %s: %v", id, err)
	}
	return r
}

// Pending lists the requests waiting in token's inbox.
func (a API) Pending(token string) []domain.Request {
	a.T.Helper()
	code, data := a.Do(http.MethodGet, "/v1/requests?status=pending", token, nil)
	if code != http.StatusOK {
		a.T.Fatalf("inbox: %d %s", code, data)
	}
	var page struct {
		Items []domain.Request `json:"items"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		a.T.Fatalf("inbox: %v", err)
	}
	return page.Items
}

// AwaitPending waits (up to 10s) until token's inbox holds a pending
// request for tool, and returns it.
func (a API) AwaitPending(token, tool string) domain.Request {
	a.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, r := range a.Pending(token) {
			if r.Capability.Target == tool && r.Approver != nil {
				return r
			}
		}
		if time.Now().After(deadline) {
			a.T.Fatalf("no pending request for %s in the inbox of %s within 10s", tool, token)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Answer answers id as token at its current revision.
func (a API) Answer(token string, id domain.RequestID, decision, reason string) domain.Request {
	a.T.Helper()
	rev := a.Get(token, id).Revision
	body := map[string]any{"expected": rev, "decision": decision, "reason": reason}
	code, data := a.Do(http.MethodPost, "/v1/requests/"+string(id), token, body)
	if code != http.StatusOK {
		a.T.Fatalf("answer %s %s: %d %s", decision, id, code, data)
	}
	var r domain.Request
	_ = json.Unmarshal(data, &r)
	return r
}

// Edit allows id as token with edits (SPEC §5): the call runs with
// arguments instead.
func (a API) Edit(token string, id domain.RequestID, arguments any) domain.Request {
	a.T.Helper()
	body := map[string]any{"expected": a.Get(token, id).Revision, "decision": "allow", "arguments": arguments}
	code, data := a.Do(http.MethodPost, "/v1/requests/"+string(id), token, body)
	if code != http.StatusOK {
		a.T.Fatalf("allow %s with edits: %d %s", id, code, data)
	}
	var r domain.Request
	_ = json.Unmarshal(data, &r)
	return r
}
