package notify

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/domain"
)

func testFeed(name string) (*mailFeed, *domain.Tenant) {
	t := &domain.Tenant{ID: "acme", Members: map[domain.MemberID]*domain.Member{
		"u-1": {ID: "u-1", Email: "ada@example.com"}}}
	m := &Mailer{cfg: MailConfig{Clock: clock.System{}, Name: func(domain.TenantID, domain.MemberID) string { return name }}}
	return &mailFeed{m: m, mail: &Mail{Tenant: "acme", From: "Approvals <approvals@example.com>"}}, t
}

func testRequest(tool string) *domain.Request {
	return &domain.Request{ID: "req_1", Tenant: "acme", Agent: "agt_main", Capability: domain.Capability{Action: "tools.call", Target: tool},
		Arguments: json.RawMessage(`{"a":1}`), Status: domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"},
		DeadlineAt: time.Now().Add(time.Hour)}
}

// What an agent or an ID token wrote never adds a header: a tool name or
// a person's name with CR LF stays inside its own header, and the
// message parses with the headers countersign wrote only.
func TestEmailHeadersTakeNoInjection(t *testing.T) {
	f, tenant := testFeed("Eve\r\nBcc: eve@evil.example")
	msg, err := f.compose(testRequest("refund\r\nBcc: eve@evil.example\n"), tenant, tenant.Members["u-1"], 0, kindRequest)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(msg.data, []byte("\r\n\r\n"))
	if bytes.Contains(head, []byte("\nBcc")) || bytes.Contains(head, []byte("\rBcc")) {
		t.Fatalf("a header was injected:\n%s", head)
	}
	m, err := mail.ReadMessage(bytes.NewReader(msg.data))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Header["Bcc"]) != 0 || msg.to != "ada@example.com" {
		t.Fatalf("headers %v, to %q", m.Header, msg.to)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if strings.ContainsAny(subject, "\r\n") || !strings.Contains(subject, `refund\u000D Bcc`) {
		t.Errorf("subject %q", subject)
	}
}

// A member's email that is not one address is refused, not sent.
func TestEmailRefusesBadAddress(t *testing.T) {
	f, tenant := testFeed("")
	for _, bad := range []string{"ada@example.com, eve@evil.example", "Ada <ada@example.com>", "not an address"} {
		mem := &domain.Member{ID: "u-1", Email: bad}
		if _, err := f.compose(testRequest("refund"), tenant, mem, 0, kindRequest); err == nil {
			t.Errorf("%q: composed", bad)
		}
	}
}

// The reminder falls at half of answer_within, else half of the time left;
// a new approver, stage or move is a new ask.
func TestEmailReminderTimeAndAsk(t *testing.T) {
	since := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	r := testRequest("refund")
	r.DeadlineAt = since.Add(2 * time.Hour)
	if got := remindAt(&domain.Member{AnswerWithin: 30 * time.Minute}, r, since); !got.Equal(since.Add(15 * time.Minute)) {
		t.Errorf("with answer_within: %v", got)
	}
	if got := remindAt(&domain.Member{}, r, since); !got.Equal(since.Add(time.Hour)) {
		t.Errorf("without: %v", got)
	}
	if got := remindAt(&domain.Member{}, r, since.Add(3*time.Hour)); !got.IsZero() {
		t.Errorf("past the deadline: %v", got)
	}
	a := askOf(r)
	r.CurrentStage = 1
	b := askOf(r)
	r.Escalation = &domain.Escalation{Passed: []domain.MemberID{"u-0"}}
	c := askOf(r)
	if a == b || b == c || a == c {
		t.Errorf("asks %q %q %q", a, b, c)
	}
}

// A group's request names who has allowed, by name with the id beside it.
func TestEmailGroupNamesWhoAllowed(t *testing.T) {
	f, tenant := testFeed("")
	tenant.Members["u-2"] = &domain.Member{ID: "u-2", Name: "Grace Hopper", Email: "grace@example.com"}
	tenant.Members["u-1"].Name = "Ada Lovelace"
	r := testRequest("pay_invoice")
	r.Approver, r.RequiredApprovals = &domain.Ref{Kind: domain.KindGroup, ID: "finance"}, 2
	r.Approvals = domain.Approvals{{By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}}}
	if got, want := f.waitingOn(r, tenant, tenant.Members["u-2"]), "group finance (you are a member): 1 of 2 approved, by Ada Lovelace (u-1)"; got != want {
		t.Errorf("waiting on = %q, want %q", got, want)
	}
}

func TestEmailDeadline(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{10 * time.Minute: "(in 10m)", time.Hour: "(in 1h)", 90 * time.Minute: "(in 1h30m)",
		20 * time.Second: "(in less than a minute)", 10*time.Hour + 10*time.Minute: "(in 10h10m)"} {
		if got := deadline(now.Add(d), now); !strings.HasSuffix(got, want) {
			t.Errorf("%v: %q, want …%s", d, got, want)
		}
	}
	if got := deadline(now.Add(time.Hour), now); got != "Fri, 04 Dec 2026 11:00 UTC (in 1h)" {
		t.Errorf("deadline = %q", got)
	}
}

// A long reason and long arguments are cut, saying so; the links stay.
func TestEmailClipsLongText(t *testing.T) {
	f, tenant := testFeed("")
	r := testRequest("refund")
	r.Reason = strings.Repeat("r", 5000)
	r.Arguments = json.RawMessage(`{"x":"` + strings.Repeat("a", 20000) + `"}`)
	v := f.view(r, tenant, tenant.Members["u-1"], kindRequest)
	text := v.text()
	if len(text) > 12000 || !strings.Contains(text, "3000 more characters of the reason") || !strings.Contains(text, "more characters of the arguments") {
		t.Errorf("text of %d bytes:\n%.300s", len(text), text)
	}
}
