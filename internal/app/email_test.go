package app_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/notify"
	"github.com/nats-io/nats.go/jetstream"
)

// mailYAML is tenant demo with email through the mailbox at smtp: Ada
// (u-1) and Grace (u-2) have an email, u-3 none; finance (u-1, u-2)
// answers pay_invoice, two of them; agt_main works for u-1. member1
// adds to u-1's entry, emailExtra to the email key.
func mailYAML(publicURL, smtp, member1, emailExtra string) string {
	return fmt.Sprintf(`public_url: %s
link_secret_env: CS_TEST_LINK_SECRET
tenants:
  - id: demo
    email: {smtp: %q, from: "Approvals <approvals@example.com>"%s}
    members:
      - {id: u-1, name: Ada Lovelace, email: ada@example.com, policy: {allow: ["*"]}%s}
      - {id: u-2, name: Grace Hopper, email: grace@example.com, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-1, u-2, u-3]}
    approval_policies:
      - {id: invoices, match: ["tools.call:pay_invoice"], approvers: {group: finance}, approve: 2}
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: mail-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: mail-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: mail-agent, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
`, publicURL, smtp, emailExtra, member1)
}

// withCredentials is the email key's AUTH PLAIN credentials.
const withCredentials = ", username_env: CS_TEST_MAIL_USER, password_env: CS_TEST_MAIL_PASS"

// startMail runs a server whose public_url is its own address, mailing
// through mb.
func startMail(t *testing.T, mb *mailbox, member1, emailExtra string, opts ...servertest.Option) *servertest.Server {
	t.Helper()
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	t.Setenv("CS_TEST_MAIL_USER", mailUser)
	t.Setenv("CS_TEST_MAIL_PASS", mailPass)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	yaml := mailYAML("http://"+ln.Addr().String(), mb.addr, member1, emailExtra)
	return servertest.Start(t, append([]servertest.Option{servertest.WithListener(ln), servertest.WithConfig(yaml),
		servertest.WithNotify(mb.tuning())}, opts...)...)
}

func submitAs(t *testing.T, srv *servertest.Server, req map[string]any) record {
	t.Helper()
	var r record
	if code := newClient(srv.URL, "mail-agent").do(t, "POST", "/v1/requests", req, nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	return r
}

func mailGet(t *testing.T, srv *servertest.Server, id string) record {
	t.Helper()
	var r record
	if code := newClient(srv.URL, "mail-agent").do(t, "GET", "/v1/requests/"+id, nil, nil, &r); code != 200 {
		t.Fatalf("GET %s: %d", id, code)
	}
	return r
}

func mailAnswer(t *testing.T, srv *servertest.Server, token, id string, rev uint64) {
	t.Helper()
	if code := answerCode(t, srv.URL, token, id, rev, "allow"); code != 200 {
		t.Fatalf("%s allows %s at %d: %d", token, id, rev, code)
	}
}

func awaitMail(t *testing.T, mb *mailbox, addr string, n int) []parsedMail {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mb.to(t, addr)) >= n }, fmt.Sprintf("%d message(s) to %s", n, addr))
	return mb.to(t, addr)
}

var (
	threadRoot = regexp.MustCompile(`^<countersign\.[0-9a-f]{32}@example\.com>$`)
	approveRe  = regexp.MustCompile(`(?m)^Approve: (\S+)$`)
	denyRe     = regexp.MustCompile(`(?m)^Deny: +(\S+)$`)
)

// A request waiting on u-1 reaches the mail server as one message to
// ada@example.com, over STARTTLS with AUTH PLAIN: text and HTML, the call
// as the inbox shows it (a bidi override escaped, a Cyrillic look-alike
// marked, markup inert in the HTML), the reason quoted as the agent's,
// people by name, and decision links that work: GET shows the page and
// decides nothing, POST answers as Ada.
func TestEmailToPersonEscapedWithLinks(t *testing.T) {
	mb := newMailbox(t, true)
	srv := startMail(t, mb, "", withCredentials)
	req := refund(1)
	req["arguments"] = map[string]any{"payee": "p\u0430ypal", "memo": "abc\u202edef", "note": "<script>alert(1)</script>", "amount": 4900}
	req["reason"] = "The customer asked twice.\nPay p\u0430ypal now\u202e"
	r := submitAs(t, srv, req)
	m := awaitMail(t, mb, "ada@example.com", 1)[0]
	if len(mb.messages()) != 1 || !m.TLS || m.User != mailUser || m.From != "approvals@example.com" {
		t.Fatalf("envelope: %d messages, TLS %v, user %q, from %q", len(mb.messages()), m.TLS, m.User, m.From)
	}
	h := m.Header
	if !threadRoot.MatchString(h.Get("Message-ID")) || h.Get("In-Reply-To") != "" || !strings.Contains(h.Get("To"), "<ada@example.com>") ||
		!strings.Contains(h.Get("To"), "Ada Lovelace") || m.Subject != "Approval needed: tools.call:issue_refund by agt_main" ||
		h.Get("X-Countersign-Request") != r.ID {
		t.Fatalf("headers: %v (subject %q)", h, m.Subject)
	}
	for part, body := range map[string]string{"text": m.Text, "html": m.HTML} {
		for _, want := range []string{`abc\u202Edef`, "⚠p\u0430ypal(≈paypal)", "Ada Lovelace (u-1)", r.ID, "Pay ⚠p\u0430ypal(≈paypal) now\\u202E", "4900"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s part lacks %q:\n%s", part, want, body)
			}
		}
		if strings.ContainsAny(body, "\u202e") {
			t.Errorf("%s part renders the bidi override", part)
		}
	}
	if !strings.Contains(m.Text, "> The customer asked twice.\n> Pay ") || !strings.Contains(m.HTML, "<blockquote") {
		t.Errorf("the reason is not quoted as the agent's words:\n%s", m.Text)
	}
	if strings.Contains(m.HTML, "<script") || !strings.Contains(m.HTML, "&lt;script&gt;") {
		t.Errorf("the HTML part renders the arguments' markup:\n%s", m.HTML)
	}
	approve, deny := approveRe.FindStringSubmatch(m.Text), denyRe.FindStringSubmatch(m.Text)
	if approve == nil || deny == nil || !strings.HasPrefix(approve[1], srv.URL+"/d/") || !strings.Contains(m.HTML, `href="`+approve[1]+`"`) {
		t.Fatalf("decision links: %q %q\n%s", approve, deny, m.Text)
	}
	if code, body, _ := page(t, "GET", approve[1]); code != 200 || !strings.Contains(body, `<form method="post">`) {
		t.Fatalf("GET the approve link: %d %s", code, body)
	}
	if got := mailGet(t, srv, r.ID); got.Status != "pending" {
		t.Fatalf("GET decided: %+v", got)
	}
	if code, body, _ := page(t, "POST", approve[1]); code != 200 || !strings.Contains(body, "approved") {
		t.Fatalf("POST the approve link: %d %s", code, body)
	}
	if got := mailGet(t, srv, r.ID); got.Status != "approved" || got.Decision.By.ID != "u-1" {
		t.Fatalf("after POST: %+v", got)
	}
	if v := metric(t, srv.URL, `countersign_email_messages_total{kind="request",outcome="sent"}`); v != 1 {
		t.Errorf("sent = %v, want 1", v)
	}
	// What Ada was sent is kept while the request is in flight only.
	kv, err := srv.App.Broker.JS.KeyValue(context.Background(), notify.MailBucket)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := kv.Get(context.Background(), "r.demo."+r.ID)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	}, "the ended request's email record removed")
}

// A group's request reaches each member with an email, once, each with
// their own links, in one thread; u-3 has no email and gets none.
func TestEmailGroupRequestReachesEachMember(t *testing.T) {
	mb := newMailbox(t, true)
	srv := startMail(t, mb, "", withCredentials)
	r := submitAs(t, srv, map[string]any{"tool": "pay_invoice", "arguments": map[string]any{"invoice": "INV-7"}, "timeout": "1h"})
	ada, grace := awaitMail(t, mb, "ada@example.com", 1)[0], awaitMail(t, mb, "grace@example.com", 1)[0]
	if ada.Header.Get("Message-ID") != grace.Header.Get("Message-ID") || !threadRoot.MatchString(ada.Header.Get("Message-ID")) {
		t.Errorf("Message-IDs %q, %q: want one thread", ada.Header.Get("Message-ID"), grace.Header.Get("Message-ID"))
	}
	for _, m := range []parsedMail{ada, grace} {
		if !strings.Contains(m.Text, "group finance") || !strings.Contains(m.Text, "0 of 2 approved") || !strings.Contains(m.Text, r.ID) {
			t.Errorf("message to %v:\n%s", m.To, m.Text)
		}
	}
	if approveRe.FindString(ada.Text) == approveRe.FindString(grace.Text) {
		t.Errorf("both got the same links")
	}
	// u-1 allows: the request still waits on u-2, who was told already.
	mailAnswer(t, srv, "mail-u1", r.ID, 0)
	mailAnswer(t, srv, "mail-u2", r.ID, 1)
	testutil.Eventually(t, 10*time.Second, func() bool { return mailGet(t, srv, r.ID).Status == "approved" }, "the quorum approves")
	if n := len(mb.messages()); n != 2 {
		t.Errorf("%d messages, want 2 (one to each member with an email)", n)
	}
}

// One member's refused address holds up no one else's message about the
// same request: Grace's arrives while Ada's is retried.
func TestEmailRefusedAddressHoldsUpNoOne(t *testing.T) {
	mb := newMailbox(t, true)
	mb.mu.Lock()
	mb.refuseRcpt = "ada@example.com"
	mb.mu.Unlock()
	srv := startMail(t, mb, "", withCredentials)
	r := submitAs(t, srv, map[string]any{"tool": "pay_invoice", "arguments": map[string]any{"invoice": "INV-8"}, "timeout": "1h"})
	testutil.Eventually(t, 10*time.Second, func() bool { return mb.refusals() >= 3 }, "Ada's address refused three times")
	if got := mailAbout(mb.to(t, "grace@example.com"), r.ID); len(got) != 1 {
		t.Fatalf("%d messages to Grace while Ada's is retried, want 1", len(got))
	}
}

// A shell request asks stage by stage: once stage 1 is allowed, stage 2
// waiting on the same person is a new message in the thread, saying
// which stage.
func TestEmailLaterStageInThread(t *testing.T) {
	mb := newMailbox(t, true)
	srv := startMail(t, mb, "", withCredentials)
	cmd := "git status && git push origin main"
	r := submitAs(t, srv, map[string]any{"tool": "Bash", "arguments": map[string]any{"command": cmd},
		"subject": map[string]any{"kind": "shell", "command": cmd}, "timeout": "1h"})
	first := awaitMail(t, mb, "ada@example.com", 1)[0]
	if !strings.Contains(first.Text, "Stage:      1 of 2: git status") {
		t.Fatalf("first message:\n%s", first.Text)
	}
	mailAnswer(t, srv, "mail-u1", r.ID, 0)
	next := awaitMail(t, mb, "ada@example.com", 2)[1]
	root := first.Header.Get("Message-ID")
	if !strings.Contains(next.Text, "Stage:      2 of 2: git push origin main") || next.Header.Get("In-Reply-To") != root ||
		next.Subject != "Re: "+first.Subject || strings.HasPrefix(next.Text, "Reminder") {
		t.Fatalf("the next stage's message: %v\n%s", next.Header, next.Text)
	}
	approve := approveRe.FindStringSubmatch(next.Text)
	if approve == nil || approve[1] == approveRe.FindStringSubmatch(first.Text)[1] {
		t.Fatalf("the next stage's links: %q", approve)
	}
}

// A reminder follows at half of u-1's answer_within, in the same thread,
// once, across restarts before and after it; when the request then moves to the backup u-2,
// Grace gets it, naming who it moved from.
func TestEmailReminderInThreadAcrossRestart(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	mb := newMailbox(t, true)
	srv := startMail(t, mb, ", backup: u-2, answer_within: 10m", withCredentials, servertest.WithClock(clock))
	r := submitAs(t, srv, refund(1))
	first := awaitMail(t, mb, "ada@example.com", 1)[0]
	srv.Restart(t) // the reminder owed survives
	clock.Set(time.Now().Add(5*time.Minute + 2*time.Second))
	reminder := awaitMail(t, mb, "ada@example.com", 2)[1]
	root := first.Header.Get("Message-ID")
	if reminder.Header.Get("In-Reply-To") != root || reminder.Header.Get("References") != root || reminder.Header.Get("Message-ID") == root ||
		reminder.Subject != "Re: "+first.Subject || !strings.HasPrefix(reminder.Text, "Reminder: ") || !strings.Contains(reminder.Text, r.ID) {
		t.Fatalf("reminder: %v %q\n%s", reminder.Header, reminder.Subject, reminder.Text)
	}

	// After another restart, the reminder sent is not owed again: a
	// second request's reminder, due later, comes after any owed earlier.
	srv.Restart(t)
	r2 := submitAs(t, srv, refund(2))
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mailAbout(mb.to(t, "ada@example.com"), r2.ID)) == 1 }, "the second request's message")
	clock.Set(time.Now().Add(5*time.Minute + 2*time.Second))
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mailAbout(mb.to(t, "ada@example.com"), r2.ID)) == 2 }, "the second request's reminder")
	if n := len(mailAbout(mb.to(t, "ada@example.com"), r.ID)); n != 2 {
		t.Fatalf("%d messages to Ada about the first request, want 2 (the request and one reminder)", n)
	}

	clock.Set(time.Now().Add(10*time.Minute + 2*time.Second))
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mailAbout(mb.to(t, "grace@example.com"), r.ID)) == 1 }, "the backup's message")
	grace := mailAbout(mb.to(t, "grace@example.com"), r.ID)[0]
	if grace.Header.Get("Message-ID") != root || !strings.Contains(grace.Text, "Moved from: Ada Lovelace (u-1)") ||
		!strings.Contains(grace.Text, "you, Grace Hopper (u-2)") {
		t.Fatalf("the backup's message: %v\n%s", grace.Header, grace.Text)
	}
}

// mailAbout keeps the messages about request id.
func mailAbout(ms []parsedMail, id string) []parsedMail {
	var out []parsedMail
	for _, m := range ms {
		if m.Header.Get("X-Countersign-Request") == id {
			out = append(out, m)
		}
	}
	return out
}

// A mail server that refuses every message, or is down, delays no
// decision: the answer goes through at once and the failures are
// counted; the message of the request answered meanwhile is not sent
// (its links are stale), and the other's is delivered once the server
// takes mail again.
func TestEmailFailingServerDelaysNoDecision(t *testing.T) {
	mb := newMailbox(t, true)
	srv := startMail(t, mb, "", withCredentials)
	failed := func() float64 {
		return metric(t, srv.URL, `countersign_email_messages_total{kind="request",outcome="failed"}`)
	}
	superseded := func() float64 {
		return metric(t, srv.URL, `countersign_email_messages_total{kind="request",outcome="superseded"}`)
	}
	for _, phase := range []struct {
		name       string
		fail, back func()
	}{
		{"refusing", func() { mb.setRefuse(true) }, func() { mb.setRefuse(false) }},
		{"down", mb.down, func() { mb.serve(t, mb.addr) }},
	} {
		phase.fail()
		before, gone := failed(), superseded()
		answered, waiting := submitAs(t, srv, refund(1)), submitAs(t, srv, refund(2))
		testutil.Eventually(t, 10*time.Second, func() bool { return failed() >= before+4 }, phase.name+": attempts fail")
		mailAnswer(t, srv, "mail-u1", answered.ID, 0)
		if got := mailGet(t, srv, answered.ID); got.Status != "approved" {
			t.Fatalf("%s: the answer while mail fails: %+v", phase.name, got)
		}
		if v := metric(t, srv.URL, `countersign_email_retry_backlog`); v < 1 {
			t.Errorf("%s: backlog = %v, want at least 1", phase.name, v)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return superseded() == gone+1 }, phase.name+": the answered request's message given up")
		phase.back()
		m := awaitMail(t, mb, "ada@example.com", 1)
		if got := mailAbout(m, waiting.ID); len(got) != 1 || len(m) != 1 {
			t.Fatalf("%s: after the server is back: %d messages, %d about the waiting request", phase.name, len(m), len(got))
		}
		testutil.Eventually(t, 5*time.Second, func() bool { return metric(t, srv.URL, `countersign_email_retry_backlog`) == 0 }, "the backlog empties")
		mb.mu.Lock()
		mb.got = nil
		mb.mu.Unlock()
	}
}

// A mail server that offers no STARTTLS never gets the credentials, even
// on loopback (where net/smtp's PlainAuth alone would send them): nothing
// is sent, and the attempts are counted as failures.
func TestEmailNeverSendsCredentialsWithoutTLS(t *testing.T) {
	mb := newMailbox(t, false)
	srv := startMail(t, mb, "", withCredentials)
	submitAs(t, srv, refund(1))
	testutil.Eventually(t, 10*time.Second, func() bool {
		return len(mb.attempts()) > 0 || metric(t, srv.URL, `countersign_email_messages_total{kind="request",outcome="failed"}`) >= 3
	}, "three failed attempts")
	if a := mb.attempts(); len(a) != 0 {
		t.Fatalf("credentials sent without TLS: %+v", a)
	}
	if n := len(mb.messages()); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
}

// A variable the email key names that is not set stops the start (and
// config check), as every *_env key does; set, the file starts.
func TestEmailCredentialsMustBeSet(t *testing.T) {
	cfg, err := config.Parse([]byte(mailYAML("https://approvals.example.com", "mail.example.com:587", "", withCredentials)))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	t.Setenv("CS_TEST_MAIL_USER", mailUser)
	t.Setenv("CS_TEST_MAIL_PASS", "")
	if err := app.Check(cfg); err == nil || !strings.Contains(err.Error(), "email.password_env: CS_TEST_MAIL_PASS is not set") {
		t.Fatalf("Check with the password unset: %v", err)
	}
	t.Setenv("CS_TEST_MAIL_PASS", mailPass)
	if err := app.Check(cfg); err != nil {
		t.Fatalf("Check with both set: %v", err)
	}
}
