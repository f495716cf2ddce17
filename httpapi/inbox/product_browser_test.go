package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// productYAML: people with names (one of them HTML, which must stay
// text), a two-person quorum of finance for refunds, and small refunds
// that wait on Ada.
const productYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, name: Ada Lovelace, policy: {allow: ["*"]}}
      - {id: u-2, name: Grace Hopper, policy: {allow: ["*"]}}
      - {id: u-3, name: "Alan <img src=x onerror=window.__pwned=1> Turing", policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-2, u-3]}
    approval_policies:
      - {id: big-refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_billing, member: u-1}
    tokens:
      - {token: t-agent, principal: "agent:agt_billing", scopes: [requests:write]}
      - {token: t-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: t-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: t-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
`

// submitAs sends a request as the billing agent with arguments as
// written (key order kept) and returns its id.
func submitAs(t *testing.T, api servertest.API, tool, reason, args string) string {
	t.Helper()
	code, data := api.Do(http.MethodPost, "/v1/requests", "t-agent", map[string]any{"tool": tool, "reason": reason, "arguments": json.RawMessage(args)})
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil || code != http.StatusCreated || r.Status != domain.StatusPending {
		t.Fatalf("submit %s: %d %s", tool, code, data)
	}
	return string(r.ID)
}

// longReason is five kilobytes of an agent's reason, its first line the
// one a row shows.
var longReason = "Refund the duplicate charge on order 1182.\n" +
	strings.Repeat("The customer was charged twice by the payment provider's retry; the ledger shows both captures and one shipment.\n", 44)

// An email whose long body comes first: to and subject must not hide
// behind it.
const emailArgs = `{"body": "Dear customer,\n\nWe are sorry for the trouble with your order. ` +
	`The duplicate charge will be returned to your card within five working days.\n\n` +
	`Our records show two captures of the same amount; the second is being reversed now. Nothing else changes on your account.\n\nKind regards,\nBilling", ` +
	`"to": "ada.customer@example.com", "subject": "Your refund for order 1182", "amount": 49.50, "currency": "GBP", "cc": ["ledger@example.com"]}`

// touch makes the tab a phone: its size, and touch as its only pointer
// (a coarse one, without hover).
func touch(b *browser) {
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateTouch, chromedp.EmulateMobile))
}

// TestInboxReadsLikeAProductInBrowser: the header names who is signed
// in; a row shows the reason's first line and up to three short
// arguments; the request's page folds a 5 KB reason, lists the short
// arguments first (a long early body never hides to or subject) with the
// full JSON a click away; times are relative and local, never raw UTC;
// history names the person who decided; a phone shows no keyboard hints;
// sign-out forgets the pasted token.
func TestInboxReadsLikeAProductInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t, servertest.WithConfig(productYAML))
	api := srv.API(t)
	email := submitAs(t, api, "send_email", longReason, emailArgs)
	submitAs(t, api, "refund_small", "Second charge on order 1183.", `{"payment_id": "pay_3kQ", "amount": 12.00, "currency": "GBP"}`)

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, "t-u1")
	b.wait("the header naming Ada", `document.getElementById('whoami').textContent === 'Signed in as Ada Lovelace (u-1)'`)
	b.wait("the email's row", has(email))
	rowText := fmt.Sprintf(`document.querySelector('#list li[data-id=%q]')`, email)
	if got := eval[string](b, rowText+`.querySelector('.line').textContent`); got != "Refund the duplicate charge on order 1182." {
		t.Errorf("the row's reason line = %q, want the reason's first line", got)
	}
	if got := eval[string](b, `[...`+rowText+`.querySelectorAll('.arg')].map(e => e.textContent).join(' | ')`); got != "to ada.customer@example.com | subject Your refund for order 1182 | amount 49.50" {
		t.Errorf("the row's arguments = %q, want to, subject and amount (the short ones, in the agent's order, three at most)", got)
	}
	b.screen("header-rows")

	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q] .what`, email))))
	b.wait("the email's page", shown(email))
	// The reason is folded to a few lines; the buttons stay in sight.
	if h := eval[float64](b, `document.getElementById('reason').getBoundingClientRect().height`); h > 140 {
		t.Errorf("the 5 KB reason is %.0f px high, want it folded to a few lines", h)
	}
	if y := eval[float64](b, `document.getElementById('open-allow').getBoundingClientRect().top`); y > 760 {
		t.Errorf("the allow button is at %.0f px, below the first screen", y)
	}
	if got := eval[string](b, `[...document.querySelectorAll('#fields th')].map(e => e.textContent).join(',')`); got != "to,subject,amount,currency,body,cc" {
		t.Errorf("the fields are in the order %q, want the short ones first, each group in the agent's order", got)
	}
	if eval[bool](b, `document.getElementById('args-json').open`) {
		t.Error("the full JSON is open; want it one click away")
	}
	// Times: relative, the exact local time on hover; no raw RFC 3339.
	facts := eval[string](b, `document.querySelector('#detail .facts').textContent`)
	if strings.Contains(facts, "T") && strings.Contains(facts, "Z") || strings.Contains(facts, "000Z") {
		t.Errorf("facts show a raw UTC time: %q", facts)
	}
	if got := eval[string](b, `(() => { const e = document.querySelector('#detail .facts time'); return e.textContent + '|' + e.title; })()`); !strings.HasPrefix(got, "just now|") && !strings.Contains(got, "ago|") || strings.Contains(got, "Z") {
		t.Errorf("created is shown as %q, want relative with the exact local time as its title", got)
	}
	if got := eval[string](b, `document.querySelector('#detail .countdown.big').title`); !strings.HasPrefix(got, "Deadline: ") || strings.Contains(got, "Z") {
		t.Errorf("the deadline's title = %q, want the exact local time", got)
	}
	if !eval[bool](b, `document.getElementById('open-edit') !== null`) {
		t.Error("a one-person request offers no Edit and allow")
	}
	if got := eval[string](b, `document.body.innerText`); !strings.Contains(got, "Allow… (a)") || !strings.Contains(got, "j/k move") {
		t.Errorf("with a mouse and keyboard the page shows no keyboard hints: %q", got)
	}
	b.screen("request-folded")
	b.do(chromedp.Click(chromedp.ID("reason-fold")))
	b.wait("the whole reason", `!document.getElementById('reason').classList.contains('folded') && document.getElementById('reason').getBoundingClientRect().height > 600`)
	b.do(chromedp.Click(chromedp.ID("reason-fold")))
	b.wait("folded again", `document.getElementById('reason').classList.contains('folded')`)
	b.do(chromedp.Click(chromedp.CSS("#args-json > summary")))
	b.wait("the full JSON", `document.getElementById('args-json').open && document.getElementById('args').textContent.startsWith('{\n  "body": ')`)

	// Allowed, the history names Ada and says when, relatively.
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('decision-allow')?.checked === true`)
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("approved", `document.querySelector('#answer-result.done')?.textContent.includes('approved')`)
	if got := eval[string](b, `document.querySelector('#detail .decision').textContent`); !strings.Contains(got, "approved by Ada Lovelace (u-1), scope once, just now") {
		t.Errorf("the decision reads %q, want it to name Ada and say when", got)
	}
	b.do(chromedp.KeyEvent("h"))
	b.wait("the history", has(email)+fmt.Sprintf(` && document.querySelector('#list li[data-id=%q]').textContent.includes('by Ada Lovelace (u-1)')`, email))
	b.do(chromedp.KeyEvent("i"))

	// A phone: no keyboard hints, nothing wider than the screen.
	touch(b)
	b.wait("the phone's media", `matchMedia('(hover: none) and (pointer: coarse)').matches`)
	b.wait("the list on the phone", `document.querySelectorAll('#list li[data-id]').length === 1`)
	b.do(chromedp.Click(chromedp.CSS(`#list li[data-id] .what`)))
	b.wait("a request's page", `document.getElementById('open-allow') !== null`)
	text := eval[string](b, `document.body.innerText`)
	for _, hint := range []string{"j/k", "(a)", "(d)", "Esc"} {
		if strings.Contains(text, hint) {
			t.Errorf("on a touch screen the page shows the keyboard hint %q", hint)
		}
	}
	if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the page is %dpx wider than the phone's screen", w)
	}
	eval[chromedp.Void](b, `document.getElementById('detail').scrollIntoView()`)
	b.screen("phone-request")

	// Sign out forgets the pasted token.
	b.do(chromedp.Click(chromedp.ID("signout")))
	b.wait("the sign-in page", `!document.getElementById('signin').hidden && document.getElementById('whoami').hidden && sessionStorage.length === 0`)
	if got := eval[string](b, `String(window.__pwned)`); got != "undefined" {
		t.Errorf("window.__pwned = %s", got)
	}
	b.checkConsole()
}

// TestInboxQuorumTrueToSpecInBrowser: on a two-person refund Grace reads
// "0 of 2", no "Edit and allow"; Alan allows meanwhile; the page says her
// answer still applies (SPEC §12), shows "1 of 2" and Alan's name as
// text; her allow, sent with the revision she saw, completes the quorum.
func TestInboxQuorumTrueToSpecInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t, servertest.WithConfig(productYAML))
	api := srv.API(t)
	id := submitAs(t, api, "issue_refund", "Duplicate charge.", `{"payment_id": "pay_9", "amount": 4900, "currency": "GBP"}`)

	b.do(chromedp.Navigate(srv.URL + "/inbox/" + id))
	signIn(b, "t-u2")
	b.wait("the refund's page", shown(id)+` && document.querySelector('#detail .facts .quorum')?.textContent === '0 of 2 approved'`)
	if got := eval[string](b, `[!!document.getElementById('open-allow'), !!document.getElementById('open-edit')].join(' ')`); got != "true false" {
		t.Errorf("allow and edit offered = %s, want allow only (the server refuses an edit of a quorum)", got)
	}
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('decision-allow')?.checked === true`)
	recordPosts(b)
	api.Answer("t-u3", domain.RequestID(id), "allow", "")
	b.wait("the note that the answer still applies", `document.getElementById('changed')?.hidden === false && document.getElementById('changed').classList.contains('fits')`)
	note := eval[string](b, `document.getElementById('changed').textContent`)
	for _, want := range []string{"Alan <img src=x onerror=window.__pwned=1> Turing (u-3) allowed meanwhile: 1 of 2 approved", "Your answer still applies"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note reads %q, want %q", note, want)
		}
	}
	if strings.Contains(note, "refused") {
		t.Errorf("the note says the answer would be refused: %q", note)
	}
	if got := eval[string](b, `document.querySelector('#detail .facts .quorum').textContent + ' | ' + document.querySelector('#detail .approvals').textContent`); !strings.HasPrefix(got, "1 of 2 approved | ") || !strings.Contains(got, "Turing (u-3)") {
		t.Errorf("the page shows %q, want the count now and who allowed", got)
	}
	if n := eval[int](b, `document.querySelectorAll('main img').length`); n != 0 {
		t.Errorf("a name became markup: %d img elements", n)
	}
	if !eval[bool](b, `document.getElementById('answer') !== null`) {
		t.Fatal("the open form was closed by the update")
	}
	b.screen("quorum-still-applies")
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("approved", `document.querySelector('#answer-result.done')?.textContent.includes('approved')`)
	if got := lastPost(t, b); got["expected"] != 0.0 {
		t.Errorf("the page sent expected %v, want the revision it showed (0)", got["expected"])
	}
	if r := api.Get("t-u2", domain.RequestID(id)); r.Status != domain.StatusApproved || len(r.Approvals) != 2 {
		t.Errorf("after Grace's allow: %s with %d approvals, want approved by two", r.Status, len(r.Approvals))
	}
	b.checkConsole()
}

// TestInboxBatchInBrowser: Ada picks three small refunds; a deploy (other
// capability) and a refund with other argument keys are refused with the
// reason; the three are shown side by side, one column per key; one is
// denied elsewhere meanwhile; one allow answers each with its own
// revision, and the result says two applied and why the third did not.
func TestInboxBatchInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t, servertest.WithConfig(productYAML))
	api := srv.API(t)
	var refunds []string
	for i, a := range []string{`{"payment_id": "pay_3kQ", "amount": 12.00, "currency": "GBP"}`,
		`{"payment_id": "pay_7Hd", "amount": 8.50, "currency": "GBP"}`, `{"payment_id": "pay_9Xe", "amount": 19.99, "currency": "EUR"}`} {
		refunds = append(refunds, submitAs(t, api, "refund_small", fmt.Sprintf("Duplicate charge on order %d.", 1183+i), a))
	}
	deploy := submitAs(t, api, "deploy", "Ship the fix.", `{"env": "prod"}`)
	other := submitAs(t, api, "refund_small", "Partial refund.", `{"payment_id": "pay_1Aa", "amount": 3.00}`)

	b.do(chromedp.Navigate(srv.URL + "/"))
	signIn(b, "t-u1")
	b.wait("every row", has(refunds[2])+" && "+has(deploy)+" && "+has(other))
	pick := func(id string) {
		b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q] input.pick`, id))))
	}
	pick(refunds[0])
	pick(refunds[1])
	// x picks the request shown.
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q] .what`, refunds[2]))))
	b.wait("the third refund", shown(refunds[2]))
	b.do(chromedp.KeyEvent("x"))
	b.wait("three picked", `document.getElementById('batch-count').textContent === '3 picked (tools.call:refund_small)'`)
	pick(deploy)
	b.wait("the deploy refused", `document.getElementById('batch-error').textContent.includes('of one capability')`)
	pick(other)
	b.wait("the other keys refused", `document.getElementById('batch-error').textContent.includes('the same keys')`)
	if got := eval[string](b, `document.getElementById('batch-error').textContent`); !strings.Contains(got, `"payment_id", "amount"`) || !strings.Contains(got, `"payment_id", "amount", "currency"`) {
		t.Errorf("the refusal reads %q, want both sets of keys", got)
	}
	if got := eval[int](b, `document.querySelectorAll('#list input.pick:checked').length`); got != 3 {
		t.Errorf("%d boxes ticked, want the three that fit", got)
	}
	b.screen("batch-refused")
	b.do(chromedp.Click(chromedp.ID("batch-open")))
	b.wait("the batch table", `document.querySelectorAll('#batch-table tbody tr').length === 3`)
	if got := eval[string](b, `[...document.querySelectorAll('#batch-table thead th.key')].map(e => e.textContent).join(',')`); got != "payment_id,amount,currency" {
		t.Errorf("the batch's columns are %q, want one per argument key", got)
	}
	if got := eval[string](b, `[...document.querySelectorAll('#batch-table tbody tr')].map(r => r.children[0].querySelector('a').textContent + ': ' + r.children[2].textContent + ' ' + r.children[3].textContent).join(' | ')`); got != "Duplicate charge on order 1183.: pay_3kQ 12.00 | Duplicate charge on order 1184.: pay_7Hd 8.50 | Duplicate charge on order 1185.: pay_9Xe 19.99" {
		t.Errorf("the batch's rows read %q", got)
	}
	b.screen("batch")

	api.Answer("t-u1", domain.RequestID(refunds[1]), "deny", "Not this one.")
	recordPosts(b)
	b.do(chromedp.SendKeys(chromedp.ID("batch-reason"), "Same customer, checked."), chromedp.Click(chromedp.ID("batch-submit")))
	b.wait("the batch's result", `document.getElementById('batch-result')?.hidden === false`)
	if got := eval[string](b, `document.getElementById('batch-result').textContent`); got != "Allowed (scope once): 2 of 3 applied; 1 not: each row says why." {
		t.Errorf("the result reads %q", got)
	}
	outcomes := eval[[]string](b, `[...document.querySelectorAll('#batch-table .outcome')].map(e => e.dataset.outcome + ': ' + e.textContent)`)
	if len(outcomes) != 3 || !strings.HasPrefix(outcomes[0], "applied: applied: the request is approved") || !strings.HasPrefix(outcomes[2], "applied: ") ||
		!strings.HasPrefix(outcomes[1], "refused: not applied (409): ") || !strings.Contains(outcomes[1], "request is denied") {
		t.Errorf("per request: %q, want the first and third applied, the second refused with the server's reason", outcomes)
	}
	posts := eval[[]string](b, `window.__posts`)
	if len(posts) != 3 {
		t.Fatalf("the page sent %d answers, want one per request", len(posts))
	}
	for _, p := range posts {
		var body map[string]any
		if err := json.Unmarshal([]byte(p), &body); err != nil || body["expected"] != 0.0 || body["decision"] != "allow" || body["scope"] != "once" {
			t.Errorf("an answer of the batch: %s, want allow once with the revision shown (0)", p)
		}
	}
	for i, want := range []domain.Status{domain.StatusApproved, domain.StatusDenied, domain.StatusApproved} {
		r := api.Get("t-u1", domain.RequestID(refunds[i]))
		if r.Status != want || (want == domain.StatusApproved && r.Decision.Note != "Same customer, checked.") {
			t.Errorf("refund %d: %s %+v, want %s", i, r.Status, r.Decision, want)
		}
	}
	if r := api.Get("t-u1", domain.RequestID(deploy)); r.Status != domain.StatusPending {
		t.Errorf("the refused deploy is %s, want still pending", r.Status)
	}
	b.wait("the answered ones gone from the list", "!("+has(refunds[0])+") && !("+has(refunds[2])+") && !("+has(refunds[1])+")")
	if got := eval[int](b, `document.querySelectorAll('#list input.pick:checked').length`); got != 0 {
		t.Errorf("%d boxes still ticked after the batch, want none", got)
	}
	b.screen("batch-result")
	touch(b)
	b.wait("the phone's media", `matchMedia('(pointer: coarse)').matches`)
	if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the batch page is %dpx wider than the phone's screen", w)
	}
	b.shot("batch-phone")
	b.checkConsole()
}
