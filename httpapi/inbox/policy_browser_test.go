package inbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

const policyYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_a, member: u-1}
    tokens:
      - {token: p-agent, principal: "agent:agt_a", scopes: [requests:write]}
      - {token: p-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: p-admin, principal: "service:ops", scopes: [admin]}
`

// policyCandidate is policyYAML with a read rule for lookups.
var policyCandidate = strings.Replace(policyYAML, "    members:", "    read_rules: [\"tools.call:lookup_*\"]\n    members:", 1)

// TestInboxPolicyReplayInBrowser: an admin opens the Policy page, pastes
// a config that adds a read rule and runs it: the two lookups that waited
// on u-1 are listed as now approved by the read rule, the deploy is not,
// and the summary counts them by capability. A config with a bad line
// shows the server's problem, naming the line. Nothing changed: the
// requests are still pending. A person sees no Policy tab, and at the
// page's address is told the server refuses them (403). The keys i and p
// move between the inbox and the Policy page.
func TestInboxPolicyReplayInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t, servertest.WithConfig(policyYAML))
	api := srv.API(t)
	var ids []string
	for _, tool := range []string{"lookup_order", "lookup_order", "deploy"} {
		code, data := api.Do(http.MethodPost, "/v1/requests", "p-agent", map[string]any{"tool": tool, "arguments": map[string]any{"n": 1}})
		var r domain.Request
		if err := json.Unmarshal(data, &r); err != nil || code != http.StatusCreated || r.Status != domain.StatusPending {
			t.Fatalf("submit %s: %d %s", tool, code, data)
		}
		ids = append(ids, string(r.ID))
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, log := api.Do(http.MethodGet, "/v1/audit", "p-admin", nil)
		if bytes.Count(log, []byte(`.request.created"`)) >= len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log does not hold the three creations:\n%s", log)
		}
	}

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, "p-admin")
	b.wait("the Policy tab for an admin", `!document.getElementById('tab-policy').hidden`)
	b.do(chromedp.Click(chromedp.ID("tab-policy")))
	b.wait("the Policy page", `!document.getElementById('policy').hidden && location.pathname === '/inbox/policy'`)
	if got := eval[string](b, `document.getElementById('policy-since').value`); got != "720h" {
		t.Errorf("since = %q, want 720h by default", got)
	}
	paste := func(yaml string) {
		t.Helper()
		js, _ := json.Marshal(yaml)
		eval[chromedp.Void](b, fmt.Sprintf(`document.getElementById('policy-config').value = %s`, js))
	}
	paste(policyCandidate)
	b.do(chromedp.Click(chromedp.ID("policy-run")))
	b.wait("the report", `document.getElementById('policy-summary') !== null`)
	rows := eval[[]string](b, `[...document.querySelectorAll('#policy-changes tbody tr')].map((tr) => tr.dataset.request + ' | ' + tr.textContent)`)
	if len(rows) != 2 {
		t.Fatalf("changes listed: %q, want the two lookups", rows)
	}
	for i, row := range rows {
		if !strings.HasPrefix(row, ids[i]+" | ") && !strings.HasPrefix(row, ids[1-i]+" | ") {
			t.Errorf("change %q, want one of the lookups %s, %s", row, ids[0], ids[1])
		}
		for _, w := range []string{"tools.call:lookup_order", "decider person:u-1 → approved by read tools.call:lookup_*", `read rule "tools.call:lookup_*" approves it at once`} {
			if !strings.Contains(row, w) {
				t.Errorf("change %q, want it to say %q", row, w)
			}
		}
	}
	if head := eval[string](b, `document.getElementById('policy-headline').textContent`); !strings.Contains(head, "3 requests since") || !strings.Contains(head, "2 would change") {
		t.Errorf("headline %q, want 3 requests, 2 would change", head)
	}
	summary := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#policy-summary tbody tr')].map((tr) => [tr.dataset.capability, [...tr.cells].map((c) => c.textContent).join(' ')]))`)
	for capability, want := range map[string]string{
		"tools.call:lookup_order": "tools.call:lookup_order 2 0 2 0 0 0 0 -",
		"tools.call:deploy":       "tools.call:deploy 1 0 0 0 0 0 1 person:u-1 (1)",
	} {
		if summary[capability] != want {
			t.Errorf("summary of %s: %q, want %q", capability, summary[capability], want)
		}
	}
	b.shot("policy")

	// The server's strings are text: markup stays letters, an invisible
	// character is shown as its escape.
	hostile, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]any](`(async () => {
	  const policy = await import('/inbox/policy.js');
	  const box = document.createElement('div');
	  box.append(...policy.report({tenant: 'acme', since: '2026-11-04T00:00:00Z', requests: 1, summary: [],
	    changes: [{request: 'req_<i>x</i>', created_at: '2026-12-01T00:00:00Z', agent: 'agt_<b>a</b>', capability: 'tools.call:x\u202e',
	      old: {by: 'decider', status: 'pending', approver: {kind: 'person', id: '<img src=x>'}, required_approvals: 1},
	      new: {by: 'read', status: 'approved', id: 'tools.call:<u>*</u>'}, reason: '<b>trust me</b>\u202e'}]}));
	  return {elements: box.querySelectorAll('#policy-changes tbody b, #policy-changes tbody i, #policy-changes tbody u, #policy-changes tbody img').length,
	    text: box.querySelector('#policy-changes tbody').textContent, raw: box.textContent.includes('\u202e')};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if hostile["elements"] != 0.0 || hostile["raw"] != false {
		t.Errorf("a hostile report rendered %v markup elements (raw U+202E: %v)", hostile["elements"], hostile["raw"])
	}
	if txt, _ := hostile["text"].(string); !strings.Contains(txt, `<b>trust me</b>\u202E`) || !strings.Contains(txt, "person:<img src=x>") {
		t.Errorf("a hostile report reads %q, want its markup as letters and U+202E as an escape", txt)
	}
	if txt, _ := hostile["text"].(string); strings.Contains(txt, "T00:00:00Z") {
		t.Errorf("a report shows a raw UTC time: %q", txt)
	}

	// A config with a bad line shows the problem; the report is gone.
	paste(strings.Replace(policyCandidate, "    agents:", "    agents: [", 1))
	b.do(chromedp.Click(chromedp.ID("policy-run")))
	b.wait("the problem", `document.getElementById('policy-error').textContent !== ''`)
	if msg := eval[string](b, `document.getElementById('policy-error').textContent`); !strings.Contains(msg, "config: ") || !strings.Contains(msg, "line 6") || strings.Contains(msg, "config: config:") {
		t.Errorf("the error reads %q, want the config's problem with its line", msg)
	}
	if n := eval[int](b, `document.querySelectorAll('#policy-report table').length`); n != 0 {
		t.Errorf("%d report tables shown after a refused config", n)
	}
	b.shot("policy-error")

	// The replay wrote nothing: the requests are still pending.
	for _, id := range ids {
		if got := api.Get("p-admin", domain.RequestID(id)); got.Status != domain.StatusPending || got.Revision != 0 {
			t.Errorf("%s after the replays: %s revision %d, want still pending at revision 0", id, got.Status, got.Revision)
		}
	}

	// The keys move between the pages: i to the inbox, p back.
	eval[chromedp.Void](b, `document.activeElement.blur()`)
	b.do(chromedp.KeyEvent("i"))
	b.wait("i: the inbox", `!document.getElementById('inbox').hidden && document.getElementById('policy').hidden && location.pathname === '/'`)
	b.do(chromedp.KeyEvent("p"))
	b.wait("p: the Policy page", `!document.getElementById('policy').hidden && location.pathname === '/inbox/policy'`)

	// A person sees no Policy tab, and the page's address says why.
	b.do(chromedp.Click(chromedp.ID("signout")), chromedp.Navigate(srv.URL+"/"))
	signIn(b, "p-person")
	b.wait("the person's inbox", has(ids[2]))
	if !eval[bool](b, `document.getElementById('tab-policy').hidden`) {
		t.Error("a person sees the Policy tab")
	}
	b.do(chromedp.KeyEvent("p"))
	if !eval[bool](b, `document.getElementById('policy').hidden && location.pathname === '/'`) {
		t.Error("p opens the Policy page for a person")
	}
	b.do(chromedp.Navigate(srv.URL + "/inbox/policy"))
	b.wait("the refusal", `document.getElementById('policy-error').textContent.includes('403')`)
	if !eval[bool](b, `document.getElementById('policy-form').hidden && document.getElementById('tab-policy').hidden`) {
		t.Error("a person is offered the replay form or the Policy tab")
	}
	b.shot("policy-refused")
	b.checkConsole()
}
