package conformance_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/links"
	"github.com/countersign/countersign/notify"
)

// The secrets of the click surfaces (the config names their variables).
const (
	linkSecret  = "the conformance test's link key"
	slackSecret = "the conformance test's slack secret"
)

// clickers are the tokens a click can stand for: a person's, with
// approvals:read and approvals:write and nothing else, which is what a
// decision link or a Slack click proves (the link's MAC, Slack's
// signature and the member's slack_user_id). Every other token is no one
// a click can be.
var clickers = map[string]struct{ member, slackUser string }{
	"tok-person": {"u-1", "U1"},
}

// click is the answer a click can give: a person's allow or deny, scope
// once, at a revision, nothing else.
func clickOf(c call) (member, slackUser, decision string, rev uint64, ok bool) {
	who, isClicker := clickers[c.token]
	decision, _ = c.body["decision"].(string)
	scope, _ := c.body["scope"].(string)
	expected, isNumber := revision(c.body["expected"])
	if !isClicker || c.op != approvals.OpAnswer || (scope != "" && scope != domain.ScopeOnce) || !isNumber || len(c.body) != 2 {
		return "", "", "", 0, false
	}
	return who.member, who.slackUser, decision, expected, decision == approvals.DecisionAllow || decision == approvals.DecisionDeny
}

// revision is an expected revision as the table writes it.
func revision(v any) (uint64, bool) {
	switch n := v.(type) {
	case uint64:
		return n, true
	case int:
		return uint64(n), n >= 0
	}
	return 0, false
}

// pageOutcome reads a decision link's page: its status says the outcome
// (a page is HTML, it names no problem), the error the status's.
func pageOutcome(status int) outcome {
	name := map[int]string{http.StatusConflict: "RequestConflict", http.StatusNotFound: "RequestNotFound",
		http.StatusForbidden: "Forbidden", http.StatusBadRequest: "InvalidRequest"}[status]
	return outcome{Status: status, Error: name}
}

// linkSurface: a decision link minted as the server mints them and
// posted to the real listener (POST /d/{token}, the form's submit) by
// the browser of the person it names, signed in (with sign-in on, a link
// answers only for them).
func linkSurface(b *http.Client, base string) surface {
	return surface{name: "link", do: func(t *testing.T, c call) (outcome, []byte, bool) {
		member, _, decision, rev, ok := clickOf(c)
		if !ok {
			return outcome{}, nil, false
		}
		d := map[string]string{approvals.DecisionAllow: links.Approve, approvals.DecisionDeny: links.Deny}[decision]
		tok := links.Mint([]byte(linkSecret), links.Claim{Tenant: tenant, Request: domain.RequestID(c.id), Revision: rev,
			Person: domain.MemberID(member), Decision: d, Deadline: time.Now().Add(time.Hour)})
		resp, err := b.Post(base+"/d/"+tok, "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatalf("link: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return outcome{Status: http.StatusOK}, nil, true
		}
		return pageOutcome(resp.StatusCode), nil, true
	}}
}

// slackSurface: a block_actions click signed as Slack signs it, posted to
// the real listener; the outcome is what countersign posts back to the
// click's response_url (a real listener of the test's).
func slackSurface(t *testing.T, s *servertest.Server) surface {
	sink := newResponses(t)
	return surface{name: "slack", do: func(t *testing.T, c call) (outcome, []byte, bool) {
		_, user, decision, rev, ok := clickOf(c)
		if !ok {
			return outcome{}, nil, false
		}
		action := map[string]string{approvals.DecisionAllow: notify.ActionApprove, approvals.DecisionDeny: notify.ActionDeny}[decision]
		payload, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user},
			"actions":      []any{map[string]any{"action_id": action, "value": notify.ActionValue(tenant, domain.RequestID(c.id), rev)}},
			"response_url": sink.srv.URL})
		body := "payload=" + url.QueryEscape(string(payload))
		stamp := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(slackSecret))
		mac.Write([]byte("v0:" + stamp + ":" + body))
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/slack/interactions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", stamp)
		req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("slack: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return outcome{Status: resp.StatusCode, Note: "the click itself was refused"}, nil, true
		}
		return slackOutcome(sink.last(t)), nil, true
	}}
}

// slackOutcome reads what countersign posted back: the message rewritten
// with the answer (200), or a note saying why not, in the words of
// httpapi's slackRefusal (a conflict, a request not the clicker's, a
// refusal).
func slackOutcome(posted string) outcome {
	switch {
	case strings.Contains(posted, "Answered from Slack by"):
		return outcome{Status: http.StatusOK}
	case strings.Contains(posted, "changed since the message"), strings.Contains(posted, "not yours to answer now"),
		strings.Contains(posted, "Already ended"), strings.Contains(posted, "protected write"), strings.Contains(posted, "no longer waiting"):
		return outcome{Status: http.StatusConflict, Error: "RequestConflict"}
	case strings.Contains(posted, "not yours to answer (it is another member's, or gone)"):
		return outcome{Status: http.StatusNotFound, Error: "RequestNotFound"}
	case strings.Contains(posted, "You may not answer this request"):
		return outcome{Status: http.StatusForbidden, Error: "Forbidden"}
	}
	return outcome{Note: "slack: " + posted}
}

// responses is the click's response_url: it keeps the last body posted.
type responses struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body string
}

func newResponses(t *testing.T) *responses {
	r := &responses{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.body = string(b)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// last takes the body posted for the click just made (the click's answer
// posts it before it returns).
func (r *responses) last(t *testing.T) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.body == "" {
		t.Fatal("slack: nothing was posted to the response_url")
	}
	b := r.body
	r.body = ""
	return b
}
