package notify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// groupRequest is a refund waiting on group finance (SPEC §12) that u-1
// has allowed with a hostile note.
func groupRequest() *domain.Request {
	r := hostileRequest()
	r.ID = domain.NewRequestID()
	r.Approver = &domain.Ref{Kind: domain.KindGroup, ID: "finance"}
	r.RequiredApprovals = 2
	r.DeadlineAt = time.Now().Add(time.Hour)
	r.Approvals = domain.Approvals{{By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, At: time.Now(), Scope: "session",
		Note: "ok <!channel> \u202e & <https://evil.example|x>"}}
	return r
}

// actionsOf returns the elements of the message's actions block.
func actionsOf(t *testing.T, payload []byte) []map[string]any {
	t.Helper()
	var m struct {
		Blocks []struct {
			Type     string           `json:"type"`
			Elements []map[string]any `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	for _, b := range m.Blocks {
		if b.Type == "actions" {
			return b.Elements
		}
	}
	return nil
}

// TestSlackGroupMessageShowsQuorum: a group's request says "1 of 2
// approved" and who, each note shown by package display and escaped for
// Slack; after a click short of the quorum the rewritten message keeps
// its buttons at the new revision.
func TestSlackGroupMessageShowsQuorum(t *testing.T) {
	r := groupRequest()
	for _, interactive := range []bool{true, false} {
		b, err := slackMessage(events.TypeRequestUpdated, r, interactive, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkSlackSafe(t, b, "pаypal", "раураӏ")
		joined := strings.Join(texts(t, b), "\n")
		for _, want := range []string{"Status: waiting on group finance: 1 of 2 approved (u-1)", "Approvals: 1 of 2 approved (u-1)",
			`Allowed by person u-1, scope session: “ok &lt;!channel&gt; \u202E &amp; &lt;https://evil.example|x&gt;”`} {
			if !strings.Contains(joined, want) {
				t.Errorf("interactive %v: message texts %q, want %q", interactive, joined, want)
			}
		}
		els := actionsOf(t, b)
		switch {
		case interactive && (len(els) != 2 || els[0]["value"] != ActionValue("acme", r.ID, 3)):
			t.Errorf("interactive buttons %v, want Approve and Deny carrying revision 3", els)
		case !interactive && els != nil:
			t.Errorf("buttons %v on a group's message without interactivity, want none (each member has their own links)", els)
		}
	}
	r.Revision = 4
	b, err := Replacement(r, "Answered from Slack by u-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if els := actionsOf(t, b); len(els) != 2 || els[0]["value"] != ActionValue("acme", r.ID, 4) {
		t.Errorf("the rewritten message's buttons %v, want them at revision 4 while the quorum is short", els)
	}
	// A one-person request's message says nothing of a quorum.
	b, _ = slackMessage(events.TypeRequestCreated, hostileRequest(), true, nil, nil)
	if strings.Contains(string(b), "approved (") || strings.Contains(string(b), "Approvals:") {
		t.Errorf("a one-person request's message speaks of a quorum: %s", b)
	}
}
