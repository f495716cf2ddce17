package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/notify"
	"github.com/countersign/countersign/problem"
	"github.com/prometheus/client_golang/prometheus"
)

// SlackTenant is one tenant's Slack app.
type SlackTenant struct {
	Tenant domain.TenantID
	// Secret is the app's signing secret (slack_signing_secret_env).
	Secret []byte
	// Members maps Slack user ids to the members they answer as.
	Members map[string]domain.MemberID
}

// notifyHandlers are the surfaces where people answer outside the API:
// decision links and Slack buttons.
type notifyHandlers struct {
	links       *LinkConfig
	linkUses    *prometheus.CounterVec
	slack       []SlackTenant
	slackClicks *prometheus.CounterVec
	slackHTTP   *http.Client
}

func (a *API) notifyRoutes(cfg Config) error {
	a.links, a.slack = cfg.Links, cfg.Slack
	var err error
	if a.linkUses, err = newLinkUses(cfg.Registry); err != nil {
		return err
	}
	a.slackClicks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_slack_interactions_total",
		Help: "Slack button clicks by outcome: decided, conflict, refused, unmapped, bad_signature, bad_payload, error."}, []string{"outcome"})
	if err := cfg.Registry.Register(a.slackClicks); err != nil {
		return fmt.Errorf("httpapi: metrics: %w", err)
	}
	a.slackHTTP = &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	a.handle("GET /d/{token}", a.linkGet)
	a.handle("POST /d/{token}", a.linkPost)
	a.handle("POST /v1/slack/interactions", a.slackInteraction)
	return nil
}

// slackClick is the part of Slack's block_actions payload countersign
// reads.
type slackClick struct {
	Type string `json:"type"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
	ResponseURL string `json:"response_url"`
}

var (
	errSlackSignature = problem.New(http.StatusUnauthorized, "Unauthenticated", "the Slack signature or timestamp is not valid")
	errSlackPayload   = problem.Invalid("payload", "not a countersign button click")
)

// slackInteraction takes a signed click on an Approve or Deny button: it
// checks Slack's v0 signature with each Slack tenant's secret, finds the
// member with the clicking user's slack_user_id, answers as that person
// (scope once, the revision the message showed), and rewrites the message
// in place through the click's response_url.
func (a *API) slackInteraction(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	st, ok := a.slackTenant(r.Header, body)
	if !ok {
		a.slackClicks.WithLabelValues("bad_signature").Inc()
		return errSlackSignature
	}
	click, id, rev, decision, ok := parseClick(st.Tenant, body)
	if !ok {
		a.slackClicks.WithLabelValues("bad_payload").Inc()
		return errSlackPayload
	}
	note := a.slackAnswer(r.Context(), st, click, id, rev, decision)
	a.slackRespond(r.Context(), click.ResponseURL, note)
	w.WriteHeader(http.StatusOK)
	return nil
}

// slackTenant finds the tenant whose signing secret signed the request.
func (a *API) slackTenant(h http.Header, body []byte) (SlackTenant, bool) {
	ts, sig, now := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature"), a.svc.Now()
	for _, st := range a.slack {
		if notify.VerifySlack(st.Secret, ts, sig, body, now) == nil {
			return st, true
		}
	}
	return SlackTenant{}, false
}

// parseClick reads the form's payload: one countersign button of tenant.
// The payload is strict JSON whose names countersign reads are matched
// exactly (wire.NoFoldedNames); Slack's other fields are ignored.
func parseClick(tenant domain.TenantID, body []byte) (slackClick, domain.RequestID, uint64, string, bool) {
	var c slackClick
	form, err := url.ParseQuery(string(body))
	payload := []byte(form.Get("payload"))
	if err != nil || !exactPayload(payload, &c) || json.Unmarshal(payload, &c) != nil || c.Type != "block_actions" || len(c.Actions) != 1 {
		return c, "", 0, "", false
	}
	decision := map[string]string{notify.ActionApprove: approvals.DecisionAllow, notify.ActionDeny: approvals.DecisionDeny}[c.Actions[0].ActionID]
	t, id, rev, ok := notify.ParseActionValue(c.Actions[0].Value)
	return c, id, rev, decision, ok && t == tenant && decision != ""
}

// exactPayload reports whether payload is strict JSON with no name that
// encoding/json would fold onto one of v's (a "TYPE" beside "type").
func exactPayload(payload []byte, v any) bool {
	canon, err := jcs.Canonicalize(payload)
	return err == nil && wire.NoFoldedNames(canon, v) == nil
}

// slackAnswer answers as the clicking member and returns the body for the
// click's response_url.
func (a *API) slackAnswer(ctx context.Context, st SlackTenant, c slackClick, id domain.RequestID, rev uint64, decision string) []byte {
	member, ok := st.Members[c.User.ID]
	caller, known := a.svc.PersonCaller(st.Tenant, member)
	if !ok || !known {
		a.slackClicks.WithLabelValues("unmapped").Inc()
		b, _ := notify.Ephemeral("Your Slack user is not linked to a countersign member (slack_user_id); nothing was answered.")
		return b
	}
	rec, err := a.answerAs(ctx, caller, id, click(rev, decision, "answered from Slack"))
	if err != nil {
		return a.slackRefusal(ctx, caller, id, rev, err)
	}
	a.slackClicks.WithLabelValues("decided").Inc()
	b, _ := notify.Replacement(&rec.Request, "Answered from Slack by "+a.personText(st.Tenant, member)+": "+a.outcome(&rec.Request), a.svc.PersonName)
	return b
}

// slackRefusal tells the clicker why the answer was refused: not theirs,
// not theirs now, no longer waiting, changed, a protected write, their
// policy; "try again" only when countersign could not take it now.
func (a *API) slackRefusal(ctx context.Context, caller approvals.Caller, id domain.RequestID, rev uint64, err error) []byte {
	p := problem.From(err)
	switch {
	case p.Reason == approvals.ReasonUnwatched:
		a.slackClicks.WithLabelValues("conflict").Inc()
		return slackNote("This is a protected write: it is answered only while the agent's own client watches its session; nothing was answered.")
	case p.Status == http.StatusConflict:
		a.slackClicks.WithLabelValues("conflict").Inc()
		return a.slackConflict(ctx, caller, id, rev)
	case p.Status == http.StatusNotFound:
		a.slackClicks.WithLabelValues("refused").Inc()
		return slackNote("This request is not yours to answer (it is another member's, or gone); nothing was answered.")
	case p.Status == http.StatusForbidden, p.Status == http.StatusBadRequest:
		a.slackClicks.WithLabelValues("refused").Inc()
		return slackNote("You may not answer this request (" + p.Detail + "); nothing was answered.")
	}
	a.slackClicks.WithLabelValues("error").Inc()
	a.log.Warn("slack answer failed", "request", id, "err", err)
	if p.Retryable() {
		return slackNote("countersign could not take the answer now; nothing was answered. Try again.")
	}
	return slackNote("countersign could not take the answer; nothing was answered.")
}

// slackNote is a note only the clicking user sees; the message stays.
func slackNote(text string) []byte {
	b, _ := notify.Ephemeral(text)
	return b
}

// slackConflict shows where the request stands now: the message is
// rewritten if it ended; otherwise the clicker is told whose it is now,
// that its deadline passed, or that it changed since the message (at
// rev), in the HTTP API's words (SPEC §12).
func (a *API) slackConflict(ctx context.Context, caller approvals.Caller, id domain.RequestID, rev uint64) []byte {
	rec, err := a.getAs(ctx, caller, id)
	if err != nil {
		return slackNote("This request is not yours to answer; nothing was answered.")
	}
	r := &rec.Request
	switch {
	case r.Status.Terminal():
		b, _ := notify.Replacement(r, "Already ended: "+a.outcome(r), a.svc.PersonName)
		return b
	case !caller.Tenant.MayAnswer(r, caller.Principal):
		return slackNote("This request is not yours to answer now (" + a.outcome(r) + "); nothing was answered.")
	case !a.svc.Now().Before(r.DeadlineAt):
		return slackNote("This request is no longer waiting: its deadline has passed; nothing was answered.")
	}
	changed := "now revision " + itoa(r.Revision)
	if !approvals.AnswerableAt(r, rev) {
		changed = problem.From(approvals.Stale(r, rev)).Detail
	}
	return slackNote("This request changed since the message (" + changed + "; " + a.outcome(r) + "); nothing was answered.")
}

// slackRespond posts body to the click's response_url (bounded; a
// failure only leaves the message as it was).
func (a *API) slackRespond(ctx context.Context, responseURL string, body []byte) {
	u, err := url.Parse(responseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.slackHTTP.Do(req)
	if err != nil {
		a.log.Warn("slack response_url failed", "err", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
