package notify

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// hostileTool is an agent's tool name written to become a channel-wide
// mention and a link in Slack's mrkdwn.
const hostileTool = "<!channel> <https://evil.example|Approve here>"

func hostileRequest() *domain.Request {
	return &domain.Request{
		ID: "req_01", Tenant: "acme", Agent: "agt_main", Revision: 3,
		Capability: domain.Capability{Action: domain.ActionToolsCall, Target: hostileTool},
		Arguments:  json.RawMessage(`{"file":"invoice` + "\u202e" + `fdp.exe","iban":"GB12\u200b3456","payee":"p\u0430ypal","site":"раураӏ.com","note":"a & b <@U1>"}`),
		Reason:     "Pay <!here> at раураӏ.com\u202e now & <https://evil.example|here>",
		Status:     domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"},
	}
}

// texts collects every "text" string of a Slack payload.
func texts(t *testing.T, payload []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "text" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

var bareAmp = regexp.MustCompile(`&(?:[^agl]|a[^m]|am[^p]|amp[^;]|l[^t]|lt[^;]|g[^t]|gt[^;]|$)`)

// checkSlackSafe: no text field holds a raw < or >, an & that is not one
// of Slack's three escapes, U+202E or U+200B; the look-alikes are marked.
func checkSlackSafe(t *testing.T, payload []byte, wantMarked ...string) {
	t.Helper()
	all := texts(t, payload)
	for _, s := range all {
		if strings.ContainsAny(s, "<>\u202e\u200b") || bareAmp.MatchString(s) {
			t.Errorf("Slack text field not escaped: %q", s)
		}
	}
	joined := strings.Join(all, "\n")
	for _, w := range wantMarked {
		if !strings.Contains(joined, "⚠"+w) {
			t.Errorf("look-alike %q not marked in %q", w, joined)
		}
	}
	if !strings.Contains(joined, `\u202E`) || !strings.Contains(joined, "&lt;!channel&gt;") {
		t.Errorf("escapes not shown in %q", joined)
	}
}

// TestSlackMessageEscapesAgentText: the message for a request whose tool
// name, arguments and reason carry Slack markup, bidi and zero-width
// characters and look-alikes (webhook format slack and the interactive
// message alike), the in-place replacement after a click, and an
// ephemeral note.
func TestSlackMessageEscapesAgentText(t *testing.T) {
	r := hostileRequest()
	for _, interactive := range []bool{true, false} {
		b, err := slackMessage(events.TypeRequestCreated, r, interactive, &Pair{ApproveURL: "https://x/d/a", DenyURL: "https://x/d/b"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkSlackSafe(t, b, "pаypal", "раураӏ")
		if !strings.Contains(string(b), `"text":"Approval needed: tools.call:\u0026lt;!channel\u0026gt; \u0026lt;https://evil.example|Approve here\u0026gt; for agt_main"`) {
			t.Errorf("fallback text not escaped: %s", b)
		}
	}
	b, err := Replacement(r, "Answered from Slack by u-1 <!here>", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSlackSafe(t, b, "pаypal", "раураӏ")
	e, err := Ephemeral("changed <!channel> & moved")
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(t, e); len(got) != 1 || got[0] != "changed &lt;!channel&gt; &amp; moved" {
		t.Errorf("ephemeral text = %q", got)
	}
}

func TestClipKeepsEntities(t *testing.T) {
	s := slackText(strings.Repeat("a", slackTextMax-2) + "<<<")
	if !strings.HasSuffix(s, "aa… (cut; see countersign)") {
		t.Errorf("clip cut an entity: %q", s[len(s)-40:])
	}
}

// A shell request's message says that Approve allows the current stage
// once, and which grant a lasting allow elsewhere would leave.
func TestSlackSaysWhichGrant(t *testing.T) {
	r := &domain.Request{ID: "req_1", Status: domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"},
		Subject: domain.Subject{Kind: domain.SubjectShell, Command: "git push origin main && sqlite3 db .tables"},
		Stages:  []domain.Stage{{Text: "git push origin main", Grant: "any `git push …`"}, {Text: "sqlite3 db .tables", Grant: "exactly this command"}}}
	for stage, want := range []string{"Stage 1 of 2: Approve allows it once and keeps no grant; a session or lifetime allow (inbox, CLI) leaves a grant of any `git push …`",
		"Stage 2 of 2: Approve allows it once and keeps no grant; a session or lifetime allow (inbox, CLI) leaves a grant of exactly this command"} {
		r.CurrentStage = stage
		b, err := slackMessage(events.TypeRequestCreated, r, true, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(texts(t, b), want) {
			t.Errorf("stage %d: message lacks %q: %s", stage, want, b)
		}
	}
}
