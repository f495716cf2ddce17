package httpapi

import (
	"net/url"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/notify"
)

// parseClick reads the names it uses exactly (SPEC §5): a "TYPE",
// "Actions" or "ACTION_ID" that encoding/json would fold onto them, or a
// duplicate key, is not a click; Slack's own other fields are ignored.
func TestParseClickNamesExact(t *testing.T) {
	id := domain.NewRequestID()
	value := notify.ActionValue("acme", id, 3)
	good := `{"type":"block_actions","user":{"id":"U1","name":"ann"},"team":{"id":"T1"},` +
		`"actions":[{"action_id":"countersign_approve","value":"` + value + `","block_id":"b"}],"response_url":"https://hooks.slack.example/r"}`
	form := func(payload string) []byte { return []byte("payload=" + url.QueryEscape(payload)) }
	if c, gotID, rev, decision, ok := parseClick("acme", form(good)); !ok || gotID != id || rev != 3 || decision != "allow" || c.User.ID != "U1" {
		t.Fatalf("parseClick(good) = %+v %s %d %q %v", c, gotID, rev, decision, ok)
	}
	for name, payload := range map[string]string{
		"TYPE beside type":  strings.Replace(good, `"team"`, `"TYPE":"view_submission","team"`, 1),
		"ACTION_ID":         strings.Replace(good, `"action_id"`, `"ACTION_ID"`, 1),
		"Actions":           strings.Replace(good, `"actions"`, `"Actions"`, 1),
		"long s in actions": strings.Replace(good, `"team"`, `"actionſ":[],"team"`, 1),
		"duplicate user":    strings.Replace(good, `"team"`, `"user":{"id":"U2"},"team"`, 1),
	} {
		if c, _, _, _, ok := parseClick("acme", form(payload)); ok {
			t.Errorf("%s: parseClick accepted %s as a click by %s", name, payload, c.User.ID)
		}
	}
}
