package notify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// Slack action ids of the two buttons.
const (
	ActionApprove = "countersign_approve"
	ActionDeny    = "countersign_deny"
)

// slackTextMax bounds the text of one block (Slack refuses more than 3000
// characters in a section).
const slackTextMax = 2800

// block is a Slack Block Kit block; Slack's JSON shapes, written as maps.
type block = map[string]any

// Names gives a member's name for people by name (SPEC §10): the
// config's, else their ID token's ("" when none; approvals.Service's
// PersonName). A nil Names names everyone by id.
type Names func(domain.TenantID, domain.MemberID) string

// person is how member id of tenant t is named: "Ada Lovelace (u-1)" (the
// name shown by package display), or the id alone.
func (n Names) person(t domain.TenantID, id string) string {
	name := ""
	if n != nil {
		name = n(t, domain.MemberID(id))
	}
	return display.Person(name, display.Text(id))
}

// ref names a principal: "person Ada Lovelace (u-1)", "group finance",
// "agent a-1".
func (n Names) ref(t domain.TenantID, p domain.Ref) string {
	if p.Kind == domain.KindPerson {
		return "person " + n.person(t, p.ID)
	}
	return p.Kind + " " + display.Text(p.ID)
}

// slackMessage is the message for one event: the call, and for a request
// waiting on a person, Approve and Deny buttons — interactive ones, or
// URL buttons opening the decision links (none without links). Every piece
// of the request is sent as plain_text or rich text, shown by package
// display (escapes, look-alikes marked), and every text field, the
// fallback text included, has Slack's & < > escaped: agent text never
// becomes a mention, a link or markup. grant events get one line.
func slackMessage(typ string, r *domain.Request, interactive bool, pair *Pair, names Names) ([]byte, error) {
	if r == nil {
		return json.Marshal(map[string]any{"text": slackText("countersign: " + events.ShortType(typ))})
	}
	blocks := CallBlocks(r, names)
	if b := buttons(r, interactive, pair); b != nil {
		blocks = append(blocks, b)
	}
	return json.Marshal(map[string]any{"text": headline(typ, r, names), "blocks": blocks})
}

// headline is the message's fallback text (notifications, screen readers),
// escaped for Slack.
func headline(typ string, r *domain.Request, names Names) string {
	switch events.ShortType(typ) {
	case "request.created", "request.escalated":
		return slackText(fmt.Sprintf("Approval needed: %s for %s", display.Text(r.Capability.String()), display.Text(string(r.Agent))))
	}
	return slackText(fmt.Sprintf("Request %s: %s", display.Text(string(r.ID)), Outcome(r, names)))
}

// Outcome says in words where r stands, people by name.
func Outcome(r *domain.Request, names Names) string {
	d := r.Decision
	switch {
	case r.Status == domain.StatusPending && r.Approver != nil && quorum(r):
		return "waiting on " + names.ref(r.Tenant, *r.Approver) + ": " + Quorum(r, names)
	case r.Status == domain.StatusPending && r.Approver != nil:
		return "waiting on " + names.ref(r.Tenant, *r.Approver)
	case d == nil:
		return string(r.Status)
	case d.Status == domain.StatusExpired:
		return "expired: no decision was made in time"
	case d.Status == domain.StatusCancelled:
		return "cancelled by the agent"
	}
	return fmt.Sprintf("%s by %s", d.Status, names.ref(r.Tenant, d.By))
}

// quorum reports whether r waits (or waited) on a group, or needs more
// than one person's allow (SPEC §12).
func quorum(r *domain.Request) bool {
	return r.Approver != nil && r.Approver.Kind == domain.KindGroup || r.Quorum() > 1
}

// Quorum says where r's quorum stands: "1 of 2 approved (Ada Lovelace
// (u-1))", who in the order they allowed, shown by package display.
func Quorum(r *domain.Request, names Names) string {
	s := fmt.Sprintf("%d of %d approved", len(r.Approvals), r.Quorum())
	if len(r.Approvals) == 0 {
		return s
	}
	who := make([]string, len(r.Approvals))
	for i, a := range r.Approvals {
		who[i] = names.person(r.Tenant, a.By.ID)
	}
	return s + " (" + strings.Join(who, ", ") + ")"
}

// CallBlocks shows the call: capability and agent, the arguments as a
// code block, the reason quoted as the agent's words, where it stands,
// and for a group's request who has allowed, each note quoted. What the
// agent and people wrote is shown by package display; people by name.
func CallBlocks(r *domain.Request, names Names) []block {
	fields := []block{plain("Capability: " + display.Text(r.Capability.String())), plain("Agent: " + display.Text(string(r.Agent))),
		plain("Request: " + display.Text(string(r.ID))), plain("Status: " + Outcome(r, names))}
	out := []block{{"type": "section", "fields": fields}, richText("rich_text_preformatted", display.JSON(r.Arguments, ""))}
	if r.Reason != "" {
		out = append(out, richText("rich_text_quote", "The agent says: "+display.Text(r.Reason)))
	}
	if g := stageGrant(r); g != "" {
		out = append(out, block{"type": "context", "elements": []block{plain(g)}})
	}
	if quorum(r) {
		lines := []block{plain("Approvals: " + Quorum(r, names))}
		for _, a := range r.Approvals {
			line := "Allowed by " + names.ref(r.Tenant, a.By) + ", scope " + display.Text(a.Scope)
			if a.Note != "" {
				line += ": “" + display.Text(a.Note) + "”"
			}
			lines = append(lines, plain(line))
		}
		out = append(out, block{"type": "context", "elements": lines[:min(len(lines), 10)]})
	}
	return out
}

// stageGrant says, for a shell request that waits, what Approve here does
// to its current stage (allows it once, keeps no grant) and which grant a
// session or lifetime allow elsewhere would leave; "" for any other.
func stageGrant(r *domain.Request) string {
	if r.Status != domain.StatusPending || r.Subject.Kind != domain.SubjectShell || r.CurrentStage >= len(r.Stages) {
		return ""
	}
	st := r.Stages[r.CurrentStage]
	s := fmt.Sprintf("Stage %d of %d: Approve allows it once and keeps no grant", r.CurrentStage+1, len(r.Stages))
	if st.Grant != "" {
		s += "; a session or lifetime allow (inbox, CLI) leaves a grant of " + st.Grant
	}
	return display.Text(s)
}

// plain is a plain_text object holding s, escaped and bounded.
func plain(s string) block { return block{"type": "plain_text", "text": slackText(s), "emoji": false} }

// richText is a rich_text block with one element of kind holding text
// literally, escaped and bounded.
func richText(kind, text string) block {
	return block{"type": "rich_text", "elements": []block{{"type": kind,
		"elements": []block{{"type": "text", "text": slackText(text)}}}}}
}

// slackEscaper escapes the three characters Slack reads as control
// sequences (<!channel>, <https://…|label>, &entities;).
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackText is s for any Slack text field: & < > escaped, then bounded.
func slackText(s string) string { return clip(slackEscaper.Replace(s)) }

// clip bounds s, never cutting a UTF-8 sequence or an &entity;.
func clip(s string) string {
	if len(s) <= slackTextMax {
		return s
	}
	cut := slackTextMax
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	if amp := strings.LastIndexByte(s[:cut], '&'); amp >= 0 && !strings.Contains(s[amp:cut], ";") {
		cut = amp
	}
	return s[:cut] + "… (cut; see countersign)"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// buttons returns the actions block, or nil when r does not wait on a
// person or a group, or there is nothing for the buttons to do (a group's
// request has buttons only when they are interactive: whoever of the group
// clicks answers as themselves).
func buttons(r *domain.Request, interactive bool, pair *Pair) block {
	if r.Status != domain.StatusPending || r.Approver == nil || (r.Approver.Kind != domain.KindPerson && r.Approver.Kind != domain.KindGroup) {
		return nil
	}
	approve := block{"type": "button", "action_id": ActionApprove, "style": "primary", "text": plain("Approve")}
	deny := block{"type": "button", "action_id": ActionDeny, "style": "danger", "text": plain("Deny")}
	switch {
	case interactive:
		v := ActionValue(r.Tenant, r.ID, r.Revision)
		approve["value"], deny["value"] = v, v
	case pair != nil:
		approve["url"], deny["url"] = pair.ApproveURL, pair.DenyURL
	default:
		return nil
	}
	return block{"type": "actions", "block_id": "countersign", "elements": []block{approve, deny}}
}

// ActionValue is what an interactive button carries: the tenant, the
// request and the revision shown.
func ActionValue(t domain.TenantID, id domain.RequestID, rev uint64) string {
	return "v1 " + string(t) + " " + string(id) + " " + strconv.FormatUint(rev, 10)
}

// ParseActionValue reads ActionValue; false on anything else.
func ParseActionValue(v string) (domain.TenantID, domain.RequestID, uint64, bool) {
	parts := strings.Split(v, " ")
	if len(parts) != 4 || parts[0] != "v1" || !domain.ConfigIDPattern.MatchString(parts[1]) || !domain.ValidGeneratedID(parts[2]) {
		return "", "", 0, false
	}
	rev, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil || strconv.FormatUint(rev, 10) != parts[3] {
		return "", "", 0, false
	}
	return domain.TenantID(parts[1]), domain.RequestID(parts[2]), rev, true
}

// Replacement is the body posted to a click's response_url: the message
// rewritten in place to show the call and how it ended, with a note on
// who answered from Slack. A group's request still short of its quorum
// keeps its buttons (at the new revision), so that the others can answer.
// People are named by names.
func Replacement(r *domain.Request, note string, names Names) ([]byte, error) {
	blocks := append(CallBlocks(r, names), block{"type": "context", "elements": []block{plain(note)}})
	if r.Approver != nil && r.Approver.Kind == domain.KindGroup {
		if b := buttons(r, true, nil); b != nil {
			blocks = append(blocks, b)
		}
	}
	return json.Marshal(map[string]any{"replace_original": true, "text": headline("", r, names), "blocks": blocks})
}

// Ephemeral is a note only the clicking user sees, escaped for Slack; the
// message stays.
func Ephemeral(text string) ([]byte, error) {
	return json.Marshal(map[string]any{"response_type": "ephemeral", "replace_original": false, "text": slackText(text)})
}
