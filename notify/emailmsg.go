package notify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// Kinds of message, the kind label of countersign_email_messages_total.
const (
	kindRequest  = "request"  // a request came to wait on the person
	kindReminder = "reminder" // it still waits on them
)

// message is one email ready to send.
type message struct {
	kind     string
	from, to string // envelope addresses
	data     []byte // the RFC 5322 message
}

// mailView is what a message shows; every piece the agent or a person
// wrote has gone through package display.
type mailView struct {
	Reminder  bool
	Lead      string
	Fields    [][2]string
	Arguments string
	Reason    []string
	Approve   string
	Deny      string
	ID        string
}

// compose builds the n-th message (0 opens the thread) to mem about r.
func (f *mailFeed) compose(r *domain.Request, t *domain.Tenant, mem *domain.Member, n int, kind string) (*message, error) {
	to, err := mail.ParseAddress(mem.Email)
	if err != nil || to.Address != strings.TrimSpace(mem.Email) {
		return nil, fmt.Errorf("notify: email: member %s: %q is not an address", mem.ID, mem.Email)
	}
	from, _ := mail.ParseAddress(f.mail.From) // Validate checked it
	to.Name = display.Text(f.name(t, mem.ID))
	v := f.view(r, t, mem, kind)
	body, ctype, err := alternative(v)
	if err != nil {
		return nil, err
	}
	h := f.header(r, mem.ID, n, from, to)
	h = append(h, [2]string{"MIME-Version", "1.0"}, [2]string{"Content-Type", ctype},
		[2]string{"Auto-Submitted", "auto-generated"}, [2]string{"X-Countersign-Request", string(r.ID)})
	var b bytes.Buffer
	for _, kv := range h {
		b.WriteString(kv[0] + ": " + kv[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return &message{kind: kind, from: from.Address, to: to.Address, data: b.Bytes()}, nil
}

// header is the n-th message's addresses, subject, date and thread: the
// first has the request's Message-ID, later ones answer it.
func (f *mailFeed) header(r *domain.Request, m domain.MemberID, n int, from, to *mail.Address) [][2]string {
	domain := domainOf(from.Address)
	root := threadID(r.Tenant, r.ID, domain)
	subject, id := subjectOf(r), root
	if n > 0 {
		subject, id = "Re: "+subject, replyID(r.Tenant, r.ID, m, n, domain)
	}
	h := [][2]string{{"From", from.String()}, {"To", to.String()}, {"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", f.m.cfg.Clock.Now().Format(time.RFC1123Z)}, {"Message-ID", id}}
	if n > 0 {
		h = append(h, [2]string{"In-Reply-To", root}, [2]string{"References", root})
	}
	return h
}

// name is how a person is named: the config's name, else the ID token's.
func (f *mailFeed) name(t *domain.Tenant, m domain.MemberID) string {
	if mem := t.Members[m]; mem != nil && mem.Name != "" {
		return mem.Name
	}
	if f.m.cfg.Name != nil {
		return f.m.cfg.Name(t.ID, m)
	}
	return ""
}

func (f *mailFeed) person(t *domain.Tenant, m domain.MemberID) string {
	return display.Person(f.name(t, m), string(m))
}

// view lays out what the message says: the call as the inbox shows it
// (escaped, look-alikes marked), the reason quoted as the agent's words,
// where it stands, the deadline and the decision links.
func (f *mailFeed) view(r *domain.Request, t *domain.Tenant, mem *domain.Member, kind string) mailView {
	v := mailView{Reminder: kind == kindReminder, ID: string(r.ID), Arguments: clipRunes(display.JSON(r.Arguments, ""), mailArgumentsMax, "arguments")}
	agent, call := display.Text(string(r.Agent)), display.Text(r.Capability.String())
	v.Lead = fmt.Sprintf("Agent %s asks to run %s. It waits on you.", agent, call)
	if v.Reminder {
		v.Lead = fmt.Sprintf("Reminder: agent %s still waits on you to answer whether it may run %s.", agent, call)
	}
	v.Fields = [][2]string{{"Request", display.Text(string(r.ID))}, {"Capability", display.Text(r.Capability.String())},
		{"Agent", display.Text(string(r.Agent))}, {"Waiting on", f.waitingOn(r, t, mem)}}
	if r.Subject.Kind == domain.SubjectShell && r.CurrentStage < len(r.Stages) {
		st := r.Stages[r.CurrentStage]
		v.Fields = append(v.Fields, [2]string{"Stage", fmt.Sprintf("%d of %d: %s", r.CurrentStage+1, len(r.Stages), display.Text(st.Text))})
	}
	if e := r.Escalation; e != nil && len(e.Passed) > 0 {
		v.Fields = append(v.Fields, [2]string{"Moved from", f.person(t, e.Passed[len(e.Passed)-1]) + ", who did not answer in time"})
	}
	v.Fields = append(v.Fields, [2]string{"Deadline", deadline(r.DeadlineAt, f.m.cfg.Clock.Now())})
	if r.Reason != "" {
		v.Reason = strings.Split(clipRunes(display.Text(r.Reason), mailReasonMax, "reason"), "\n")
	}
	if l := f.m.cfg.Links; l != nil && r.Status == domain.StatusPending {
		p := l.ForPerson(r, mem.ID)
		v.Approve, v.Deny = p.ApproveURL, p.DenyURL
	}
	return v
}

// Bounds of what a message shows of the arguments and the reason, in
// characters as shown; the decision page and the inbox show all of it.
const (
	mailArgumentsMax = 8000
	mailReasonMax    = 2000
)

// clipRunes cuts shown text s to max characters, saying so.
func clipRunes(s string, max int, what string) string {
	rs := []rune(s)
	if len(rs) <= max {
		return s
	}
	return string(rs[:max]) + fmt.Sprintf("\n… (%d more characters of the %s: open a link or the inbox to see all of it)", len(rs)-max, what)
}

func (f *mailFeed) waitingOn(r *domain.Request, t *domain.Tenant, mem *domain.Member) string {
	if r.Approver.Kind == domain.KindGroup {
		s := fmt.Sprintf("group %s (you are a member): %d of %d approved", display.Text(r.Approver.ID), len(r.Approvals), r.Quorum())
		var who []string
		for _, a := range r.Approvals {
			who = append(who, f.person(t, domain.MemberID(a.By.ID)))
		}
		if len(who) > 0 {
			s += ", by " + strings.Join(who, ", ")
		}
		return s
	}
	return "you, " + f.person(t, mem.ID)
}

// deadline shows when r expires, in UTC and from now.
func deadline(at, now time.Time) string {
	left := at.Sub(now).Round(time.Minute)
	rel := "in " + strings.TrimSuffix(left.String(), "0s") // 1h30m0s: 1h30m
	if h, ok := strings.CutSuffix(rel, "h0m"); ok {
		rel = h + "h"
	}
	if left < time.Minute {
		rel = "in less than a minute"
	}
	return at.UTC().Format("Mon, 02 Jan 2006 15:04 MST") + " (" + rel + ")"
}

// subjectOf is the thread's subject, on one line.
func subjectOf(r *domain.Request) string {
	s := "Approval needed: " + display.Text(r.Capability.String()) + " by " + display.Text(string(r.Agent))
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	if rs := []rune(s); len(rs) > 160 {
		s = string(rs[:160]) + "…"
	}
	return s
}

// threadID is the Message-ID of the first message about a request, the
// same for everyone and on every resend: what later ones answer.
func threadID(t domain.TenantID, id domain.RequestID, domain string) string {
	return "<" + digest("thread", string(t), string(id)) + "@" + domain + ">"
}

// replyID is the Message-ID of the n-th message to m about a request:
// stable, so that a message sent again is one message to the reader.
func replyID(t domain.TenantID, id domain.RequestID, m domain.MemberID, n int, domain string) string {
	return "<" + digest("reply", string(t), string(id), string(m), fmt.Sprint(n)) + "@" + domain + ">"
}

func digest(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return "countersign." + hex.EncodeToString(h[:16])
}

func domainOf(addr string) string {
	_, d, _ := strings.Cut(addr, "@")
	return d
}

// text is the text/plain part.
func (v mailView) text() string {
	var b strings.Builder
	b.WriteString(v.Lead + "\n\n")
	for _, f := range v.Fields {
		fmt.Fprintf(&b, "%-11s %s\n", f[0]+":", f[1])
	}
	b.WriteString("\nArguments:\n" + v.Arguments + "\n")
	if len(v.Reason) > 0 {
		b.WriteString("\nThe agent's reason, in its own words:\n")
		for _, l := range v.Reason {
			b.WriteString("> " + l + "\n")
		}
	}
	if v.Approve != "" {
		b.WriteString("\nApprove: " + v.Approve + "\nDeny:    " + v.Deny + "\n")
		b.WriteString("Opening a link shows the call again; nothing is decided until you confirm there.\n")
	} else {
		b.WriteString("\nAnswer it in the inbox, or with: countersign approve " + v.ID + "\n")
	}
	return b.String()
}

var htmlTmpl = template.Must(template.New("h").Parse(`<!DOCTYPE html>
<html><body style="font-family:sans-serif">
<p><strong>{{.Lead}}</strong></p>
<table>{{range .Fields}}<tr><td style="color:#555;padding-right:1em">{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}</table>
<p>Arguments:</p>
<pre style="background:#f4f4f4;padding:.5em;white-space:pre-wrap">{{.Arguments}}</pre>
{{if .Reason}}<p>The agent's reason, in its own words:</p>
<blockquote style="border-left:3px solid #ccc;margin:0;padding-left:1em">{{range $i, $l := .Reason}}{{if $i}}<br>{{end}}{{$l}}{{end}}</blockquote>
{{end}}{{if .Approve}}<p><a href="{{.Approve}}">Approve</a> &nbsp; <a href="{{.Deny}}">Deny</a></p>
<p style="color:#555">Opening a link shows the call again; nothing is decided until you confirm there.</p>
{{else}}<p>Answer it in the inbox, or with <code>countersign approve {{.ID}}</code>.</p>
{{end}}</body></html>
`))

// alternative is the multipart/alternative body: text, then HTML, each
// quoted-printable.
func alternative(v mailView) (body []byte, contentType string, err error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	var html bytes.Buffer
	if err := htmlTmpl.Execute(&html, v); err != nil {
		return nil, "", err
	}
	for _, p := range []struct{ typ, s string }{{"text/plain", v.text()}, {"text/html", html.String()}} {
		pw, err := w.CreatePart(textproto.MIMEHeader{"Content-Type": {p.typ + "; charset=utf-8"}, "Content-Transfer-Encoding": {"quoted-printable"}})
		if err != nil {
			return nil, "", err
		}
		qw := quotedprintable.NewWriter(pw)
		if _, err := qw.Write([]byte(p.s)); err != nil {
			return nil, "", err
		}
		if err := qw.Close(); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), "multipart/alternative; boundary=" + w.Boundary(), nil
}
