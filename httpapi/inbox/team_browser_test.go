package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// signIn signs the tab in as token and waits for the live inbox.
func signIn(b *browser, token string) {
	b.wait("the sign-in form", `!document.getElementById('signin').hidden`)
	b.do(chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the live inbox", `document.getElementById('live').classList.contains('on')`)
}

// TestInboxHistoryHoldsWhatEndedInBrowser: a request that expired and one
// that was cancelled while waiting on the person are in the person's
// history, saying how they ended (issue 22: the list API returned [] for
// them).
func TestInboxHistoryHoldsWhatEndedInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)
	expired := submit(t, api, map[string]any{"tool": "deploy", "timeout": "1s", "arguments": map[string]any{"env": "prod"}})
	cancelled := submit(t, api, map[string]any{"tool": "send_email", "arguments": map[string]any{"to": "a@example.com"}})
	if code, data := api.Do(http.MethodPost, "/v1/requests/"+cancelled+"/cancel", servertest.TokenMain, nil); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, data)
	}
	for api.Get(servertest.TokenMain, domain.RequestID(expired)).Status != domain.StatusExpired {
		api.Do(http.MethodGet, "/v1/requests/"+expired+"?wait=30s", servertest.TokenMain, nil)
	}

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, servertest.TokenPerson)
	b.wait("nothing pending", `document.getElementById('count').textContent === '0'`)
	b.do(chromedp.KeyEvent("h"))
	b.wait("both ended requests in the history", has(expired)+" && "+has(cancelled))
	for id, want := range map[string]string{expired: "expired", cancelled: "cancelled"} {
		if row := eval[string](b, fmt.Sprintf(`document.querySelector('#list li[data-id=%q]').textContent`, id)); !strings.Contains(row, want) {
			t.Errorf("history row %q, want it to say %s", row, want)
		}
	}
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q]`, expired))))
	b.wait("the expired request's page", shown(expired))
	if txt := eval[string](b, `document.querySelector('#detail .decision').textContent`); !strings.Contains(txt, "No decision was made in time") ||
		strings.Contains(txt, "denied") {
		t.Errorf("the expired request's decision reads %q, want no decision in time (never a denial)", txt)
	}
	if facts := eval[string](b, `document.querySelector('#detail .facts').textContent`); !strings.Contains(facts, "was waiting onperson u-1") {
		t.Errorf("the expired request's facts %q, want whom it was waiting on", facts)
	}
	b.shot("history-ended")
	b.checkConsole()
}

// TestInboxKeyboardAndAddressesInBrowser: rows are in the Tab order and
// Enter opens one (the keyboard moves to its page); a live update keeps
// the focused row focused; each request has its own address, which opens
// it when loaded, signed in or not; an address of a request one may not
// see says so.
func TestInboxKeyboardAndAddressesInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)
	first := submit(t, api, map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}})
	second := submit(t, api, map[string]any{"tool": "send_email", "arguments": map[string]any{"to": "a@example.com"}})

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, servertest.TokenPerson)
	b.wait("both rows", has(first)+" && "+has(second))
	eval[chromedp.Void](b, `document.activeElement.blur()`)
	tabs := 0
	for ; tabs < 12 && !eval[bool](b, `document.activeElement.matches('#list li[data-id]')`); tabs++ {
		b.do(chromedp.KeyEvent(kb.Tab))
	}
	if got := eval[string](b, `document.activeElement.dataset.id ?? document.activeElement.tagName`); got != first {
		t.Fatalf("after %d Tabs the focus is on %q, want the first row %s", tabs, got, first)
	}
	b.do(chromedp.KeyEvent(kb.Tab))
	if got := eval[string](b, `document.activeElement.dataset.id ?? ''`); got != second {
		t.Errorf("Tab from the first row reaches %q, want the second row %s", got, second)
	}
	b.do(chromedp.KeyEvent(kb.ArrowUp))
	b.wait("ArrowUp back on the first row", fmt.Sprintf(`document.activeElement.dataset.id === %q`, first))

	// A live update re-renders the list; the focused row keeps the focus.
	third := submit(t, api, map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "staging"}})
	b.wait("the third row", has(third))
	if got := eval[string](b, `document.activeElement.dataset.id ?? document.activeElement.tagName`); got != first {
		t.Errorf("after a live update the focus is on %q, want still the first row", got)
	}
	b.shot("row-focused")

	b.do(chromedp.KeyEvent(kb.Enter))
	b.wait("Enter opens the first request", shown(first))
	b.wait("its address", fmt.Sprintf(`location.pathname === '/inbox/%s'`, first))
	if got := eval[string](b, `document.activeElement.id`); got != "detail" {
		t.Errorf("after Enter the focus is on #%s, want the request's page", got)
	}
	b.do(chromedp.KeyEvent("j"))
	b.wait("j moves the address along", fmt.Sprintf(`location.pathname === '/inbox/%s'`, second))

	// Loading an address opens its request.
	b.do(chromedp.Navigate(srv.URL + "/inbox/" + third))
	b.wait("the addressed request, signed in", shown(third))
	// Signed out (a new tab has no token), the address opens after sign-in.
	eval[chromedp.Void](b, `sessionStorage.clear()`)
	b.do(chromedp.Navigate(srv.URL + "/inbox/" + second))
	signIn(b, servertest.TokenPerson)
	b.wait("the addressed request after sign-in", shown(second))
	// A request that does not exist (or is not the person's) says so.
	b.do(chromedp.Navigate(srv.URL + "/inbox/req_01JC0000000000000000000000"))
	b.wait("the refusal", `document.getElementById('detail-error')?.textContent.includes('no request req_01JC0000000000000000000000')`)
	if n := eval[int](b, `document.querySelectorAll('#detail button').length`); n != 0 {
		t.Errorf("%d buttons on the page of a request that does not exist", n)
	}
	b.checkConsole()
}

// TestInboxLargeArgumentsFoldInBrowser: a 200 KB argument is shown folded,
// so the answer's buttons stay near the top of the page; the control
// unfolds and folds it; an invisible character at its very end is still
// named in the notices.
func TestInboxLargeArgumentsFoldInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)
	blob := strings.Repeat("refund line 0123456789 ", 200_000/23) + "\u202e end"
	args, _ := json.Marshal(map[string]any{"payment_id": "payment_123", "lines": blob})
	big := submit(t, api, map[string]any{"tool": "issue_refund", "arguments": json.RawMessage(args)})
	small := submit(t, api, map[string]any{"tool": "issue_refund", "arguments": map[string]any{"payment_id": "payment_124"}})

	b.do(chromedp.Navigate(srv.URL + "/inbox/" + big))
	signIn(b, servertest.TokenPerson)
	b.wait("the large request", shown(big)+` && document.getElementById('open-allow') !== null`)
	b.wait("the header naming u-1, who has no name", `document.getElementById('whoami').textContent === 'Signed in as u-1'`)
	below := `document.getElementById('open-allow').getBoundingClientRect().top - document.getElementById('detail').getBoundingClientRect().top`
	if y := eval[float64](b, below); y > 1500 {
		t.Errorf("the allow button is %.0f px below the top of the request's page, want it within 1500 px", y)
	}
	if got := eval[string](b, `document.getElementById('args-fold')?.getAttribute('aria-expanded') ?? 'no control'`); got != "false" {
		t.Errorf("the fold control's aria-expanded = %s, want false", got)
	}
	if notice := eval[string](b, `document.querySelector('.notices')?.textContent ?? ''`); !strings.Contains(notice, "RIGHT-TO-LEFT OVERRIDE") {
		t.Errorf("notices = %q, want the override at the end of the folded argument named", notice)
	}
	b.shot("folded")

	// (centred first: the answer's buttons stay in sight at the bottom)
	eval[chromedp.Void](b, `document.querySelector('#args-json > summary').scrollIntoView({block: 'center'})`)
	b.do(chromedp.Click(chromedp.CSS("#args-json > summary")))
	eval[chromedp.Void](b, `document.getElementById('args-fold').scrollIntoView({block: 'center'})`)
	b.do(chromedp.Click(chromedp.ID("args-fold")))
	b.wait("unfolded", `document.getElementById('args-fold').getAttribute('aria-expanded') === 'true'`)
	if !eval[bool](b, `(() => { const a = document.getElementById('args'); return a.scrollHeight <= a.clientHeight + 1 && a.clientHeight > 5000; })()`) {
		t.Error("unfolded, the arguments are still cut to a box")
	}
	if !strings.Contains(eval[string](b, `document.getElementById('args').textContent`), `\u202E end`) {
		t.Error("unfolded, the end of the argument is not shown with its escape")
	}
	eval[chromedp.Void](b, `document.getElementById('args-fold').scrollIntoView({block: 'center'})`)
	b.do(chromedp.Click(chromedp.ID("args-fold")))
	b.wait("folded again", `document.getElementById('args-fold').getAttribute('aria-expanded') === 'false'`)
	if y := eval[float64](b, below); y > 1500 {
		t.Errorf("folded again, the allow button is %.0f px down", y)
	}

	b.do(chromedp.KeyEvent("j"))
	b.wait("the small request", shown(small))
	if n := eval[int](b, `document.querySelectorAll('#args-fold, #args.folded').length`); n != 0 {
		t.Errorf("a small argument is folded (%d fold elements)", n)
	}
	b.checkConsole()
}

// quorumScript renders, with the page's own modules and in the page, a
// request waiting on a group (SPEC §12) that one person has allowed, and
// reports what a person reads.
const quorumScript = `(async () => {
  const view = await import('/inbox/view.js');
  const json = await import('/inbox/json.js');
  const r = json.decode(JSON.stringify({id: 'req_01JC0000000000000000000001', tenant: 'demo', agent: 'agt_main',
    capability: {action: 'tools.call', target: 'issue_refund'}, tool: 'issue_refund', chain: ['agt_main'],
    arguments: {payment_id: 'payment_123', amount: 4900, currency: 'GBP'}, subject: {kind: 'tool'},
    reason: 'Duplicate charge.', status: 'pending', approver: {kind: 'group', id: 'finance'}, required_approvals: 2,
    approvals: [{by: {kind: 'person', id: 'u-1'}, at: '2026-12-01T12:00:00Z', scope: 'session', note: 'Checked \u202e the ledger.'}],
    endorsements: [], judge_escalated: false, reviewer_reason: null, revision: 1, created_at: '2026-12-01T11:59:00Z',
    deadline_at: new Date(Date.now() + 3600e3).toISOString(), decision: null}));
  const before = Object.assign({}, r, {revision: 0, approvals: []});
  const done = Object.assign({}, r, {status: 'approved', revision: 2,
    approvals: r.approvals.concat([{by: {kind: 'person', id: 'u-2'}, at: '2026-12-01T12:01:00Z', scope: 'once', note: ''}]),
    decision: {status: 'approved', by: {kind: 'person', id: 'u-2'}, scope: 'once', decided_at: '2026-12-01T12:01:00Z'}});
  document.getElementById('signin').hidden = true;
  document.getElementById('inbox').hidden = false;
  document.getElementById('list').replaceChildren(view.row(r, true), view.historyRow(done, false));
  document.getElementById('empty').hidden = true;
  document.getElementById('detail').replaceChildren(...view.page(r));
  const d = document.getElementById('detail');
  return {
    row: document.querySelector('#list li').textContent,
    history: document.querySelectorAll('#list li')[1].textContent,
    facts: d.querySelector('.facts').textContent,
    approvals: d.querySelector('.approvals')?.textContent ?? '',
    changes: view.changes(before, r),
    plain: view.page(Object.assign({}, r, {approver: {kind: 'person', id: 'u-1'}, required_approvals: 1, approvals: []}))
      .some((e) => e.classList.contains('approvals')),
  };
})()`

// TestInboxQuorumInBrowser: a group's request shows its quorum ("1 of 2
// approved") in the list, on its page and in the history, who has
// allowed (their note as quoted data, escapes shown), and a conflict's
// account names the new approver; a one-person request shows none of it.
func TestInboxQuorumInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the page", `document.getElementById('signin') !== null`)
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]any](quorumScript, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	for key, wants := range map[string][]string{
		"row":       {"1 of 2 approved"},
		"history":   {"approved", "2 of 2 approved"},
		"facts":     {"quorum1 of 2 approved", "waiting ongroup finance"},
		"approvals": {"Answered so far: 1 of 2 approved", "allowed by person u-1, scope session", `Checked \u202E the ledger.`},
		"changes":   {"person u-1 allowed: 1 of 2 approved."},
	} {
		for _, w := range wants {
			if s, _ := got[key].(string); !strings.Contains(s, w) {
				t.Errorf("%s = %q, want %q", key, s, w)
			}
		}
	}
	if s, _ := got["approvals"].(string); strings.Contains(s, "\u202e") {
		t.Errorf("the approval's note renders U+202E: %q", s)
	}
	if got["plain"] != false {
		t.Error("a one-person request shows an approvals section")
	}
	b.shot("quorum")
	b.checkConsole()
}

const teamYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-2, u-3]}
    approval_policies:
      - {id: big-refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_a, member: u-1}
    tokens:
      - {token: t-agent, principal: "agent:agt_a", scopes: [requests:write]}
      - {token: t-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: t-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
`

// TestInboxGroupRequestInBrowser: a refund that needs two of finance is in
// u-2's inbox showing "0 of 2 approved"; u-2 allows it in the page, which
// then shows "1 of 2 approved" by u-2 with the request still pending; u-3
// allows over HTTP and u-2's history shows it approved, 2 of 2.
func TestInboxGroupRequestInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t, servertest.WithConfig(teamYAML))
	api := srv.API(t)
	code, data := api.Do(http.MethodPost, "/v1/requests", "t-agent", map[string]any{"tool": "issue_refund", "arguments": map[string]any{"amount": 4900}})
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil || code != http.StatusCreated || r.Approver == nil || r.Approver.Kind != domain.KindGroup {
		t.Fatalf("submit: %d %s, want a request waiting on group finance", code, data)
	}
	id := string(r.ID)

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, "t-u2")
	b.wait("the group's request in u-2's inbox", has(id))
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q]`, id))))
	b.wait("its page", shown(id)+` && document.querySelector('#detail .facts .quorum')?.textContent === '0 of 2 approved'`)
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('decision-allow')?.checked === true`)
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("one of two", `document.querySelector('#detail .facts .quorum')?.textContent === '1 of 2 approved'`)
	if txt := eval[string](b, `document.querySelector('#detail .approvals').textContent + ' | ' + document.querySelector('#detail .facts').textContent`); !strings.Contains(txt, "allowed by person u-2") ||
		!strings.Contains(txt, "pending") {
		t.Errorf("after u-2's allow the page reads %q, want u-2's allow counted and the request still pending", txt)
	}
	if msg := eval[string](b, `document.getElementById('answer-result').textContent`); !strings.Contains(msg, "You allowed: 1 of 2 approved (") && !strings.Contains(msg, "You allowed: 1 of 2 approved;") {
		t.Errorf("the answer's outcome reads %q, want the quorum", msg)
	}
	if n := eval[int](b, `document.querySelectorAll('#open-allow, #open-deny, #open-edit, #not-yours').length`); n != 0 {
		t.Errorf("right after u-2's allow the page offers %d answers or notes beside its result, want none", n)
	}
	b.do(chromedp.Navigate(srv.URL + "/inbox/" + id))
	b.wait("its page again, knowing who reads it", shown(id)+` && document.getElementById('not-yours') !== null`)
	if got := eval[string](b, `(document.getElementById('not-yours')?.textContent ?? 'none') + ' | ' + document.querySelectorAll('#open-allow, #open-deny, #open-edit').length`); !strings.HasPrefix(got, "You have allowed it (1 of 2 approved)") || !strings.HasSuffix(got, " | 0") {
		t.Errorf("after u-2's allow the page reads %q, want no more answers offered to u-2 (the server refuses an opposite one)", got)
	}
	b.wait("the list's count", fmt.Sprintf(`document.querySelector('#list li[data-id=%q]')?.textContent.includes('1 of 2 approved')`, id))
	b.shot("group-one-of-two")
	if got := api.Get("t-u2", r.ID); got.Status != domain.StatusPending || len(got.Approvals) != 1 {
		t.Fatalf("after u-2's allow in the page: %s with %d approvals, want pending with 1", got.Status, len(got.Approvals))
	}
	api.Answer("t-u3", r.ID, "allow", "")
	b.do(chromedp.KeyEvent("h"))
	b.wait("the approved request in u-2's history", has(id)+fmt.Sprintf(` && document.querySelector('#list li[data-id=%q]').textContent.includes('2 of 2 approved')`, id))
	b.checkConsole()
}
