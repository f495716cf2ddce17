package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/links"
	"github.com/countersign/countersign/problem"
	"github.com/prometheus/client_golang/prometheus"
)

// LinkConfig turns on decision links (GET and POST /d/{token}).
type LinkConfig struct {
	// Secret is the key of the links' MACs (link_secret_env).
	Secret []byte
}

// Outcomes of a decision link's use, the label of
// countersign_decision_link_uses_total.
const (
	linkShown     = "shown"     // GET showed the confirmation page
	linkDecided   = "decided"   // POST answered
	linkUsed      = "used"      // the person had already answered
	linkStale     = "stale"     // the request changed, or waits on someone else
	linkExpired   = "expired"   // the deadline passed
	linkForged    = "forged"    // the MAC does not match
	linkMalformed = "malformed" // not a token
	linkGone      = "not_found" // no such request for that person
	linkFailed    = "error"     // the answer failed (NATS unavailable)
	linkUnwatched = "unwatched" // a protected write no client watches
	linkNotYou    = "not_you"   // sign-in is on, and the link's person is not signed in here
)

func newLinkUses(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_decision_link_uses_total",
		Help: "Uses of decision links by outcome: shown, decided, used, stale, expired, forged, malformed, not_found, unwatched, not_you, error."}, []string{"outcome"})
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("httpapi: metrics: %w", err)
	}
	for _, o := range []string{linkShown, linkDecided, linkUsed, linkStale, linkExpired, linkForged, linkMalformed, linkGone, linkUnwatched, linkNotYou, linkFailed} {
		c.WithLabelValues(o)
	}
	return c, nil
}

// linkGet shows the call and a form; it never decides (mail scanners and
// link previews open links).
func (a *API) linkGet(w http.ResponseWriter, r *http.Request) error {
	c, _, rec, ok := a.linkState(w, r)
	if !ok {
		return nil
	}
	a.linkUses.WithLabelValues(linkShown).Inc()
	writeLinkPage(w, http.StatusOK, a.linkPageOf(c, linkPage{Title: confirmTitle(c.Decision), Decision: c.Decision, Request: &rec.Request}))
	return nil
}

// linkPost answers once, as the link's person, with the revision in the
// token as expected: the same use case as POST /v1/requests/{id}.
func (a *API) linkPost(w http.ResponseWriter, r *http.Request) error {
	c, caller, cur, ok := a.linkState(w, r)
	if !ok {
		return nil
	}
	if why := a.linkNotSignedIn(r, c); why != "" {
		a.linkUses.WithLabelValues(linkNotYou).Inc()
		writeLinkPage(w, http.StatusForbidden, a.linkPageOf(c, linkPage{Title: "Not answered", Why: why + " Nothing was decided.", Request: &cur.Request}))
		return nil
	}
	rec, err := a.answerAs(r.Context(), caller, c.Request, click(c.Revision, c.Decision, "answered with a decision link"))
	switch {
	case problem.From(err).Reason == approvals.ReasonUnwatched:
		a.linkUses.WithLabelValues(linkUnwatched).Inc()
		writeLinkPage(w, http.StatusConflict, a.linkPageOf(c, linkPage{Title: "Not answered", Why: "This is a protected write: it is answered only while the agent's own client watches its session. Nothing was changed.", Request: &cur.Request}))
		return nil
	case errors.Is(err, approvals.ErrConflict):
		a.linkRefuse(w, r, c, caller, linkStale)
		return nil
	case err != nil:
		a.linkUses.WithLabelValues(linkFailed).Inc()
		a.log.Warn("decision link answer failed", "request", c.Request, "err", err)
		writeLinkPage(w, http.StatusServiceUnavailable, linkPage{Title: "Not answered", Why: "countersign could not take the answer now; try again."})
		return nil
	}
	a.linkUses.WithLabelValues(linkDecided).Inc()
	writeLinkPage(w, http.StatusOK, a.linkPageOf(c, linkPage{Title: "Answered", Done: "Your answer was recorded: " + a.outcome(&rec.Request), Request: &rec.Request}))
	return nil
}

// linkState checks the token and the request. When the link may be used
// it returns the claim, the person as caller and the record; otherwise it
// has written the page that says why, and ok is false.
func (a *API) linkState(w http.ResponseWriter, r *http.Request) (links.Claim, approvals.Caller, kvstate.Record, bool) {
	var none kvstate.Record
	if a.links == nil {
		writeLinkPage(w, http.StatusNotFound, linkPage{Title: "No decision links", Why: "Decision links are not enabled on this server."})
		return links.Claim{}, approvals.Caller{}, none, false
	}
	c, err := links.Check(a.links.Secret, r.PathValue("token"), a.svc.Now())
	if err != nil {
		a.linkBad(w, err)
		return c, approvals.Caller{}, none, false
	}
	caller, ok := a.svc.PersonCaller(c.Tenant, c.Person)
	if !ok {
		a.linkUses.WithLabelValues(linkGone).Inc()
		writeLinkPage(w, http.StatusNotFound, linkPage{Title: "Unknown request", Why: "This link names a person or tenant that is not configured."})
		return c, caller, none, false
	}
	rec, err := a.getAs(r.Context(), caller, c.Request)
	if err != nil {
		a.linkUses.WithLabelValues(linkGone).Inc()
		writeLinkPage(w, http.StatusNotFound, linkPage{Title: "Unknown request", Why: "There is no such request for you to answer (it may have been removed after its retention). Nothing was changed."})
		return c, caller, none, false
	}
	if outcome := linkFits(c, caller, &rec.Request); outcome != "" {
		a.linkWhy(w, c, &rec.Request, outcome)
		return c, caller, none, false
	}
	return c, caller, rec, true
}

// linkFits says why the link can no longer answer r ("" if it can). A
// group's request waits on each member (SPEC §12); a member whose allow
// is already counted has used their link.
func linkFits(c links.Claim, caller approvals.Caller, r *domain.Request) string {
	switch {
	case r.Status.Terminal() && r.Decision != nil && r.Decision.By == caller.Principal, r.Approvals.By(caller.Principal):
		return linkUsed
	case r.Status.Terminal(), !approvals.AnswerableAt(r, c.Revision), !caller.Tenant.MayAnswer(r, caller.Principal):
		return linkStale
	}
	return ""
}

// linkRefuse re-reads the request after a refused answer and says why.
func (a *API) linkRefuse(w http.ResponseWriter, r *http.Request, c links.Claim, caller approvals.Caller, fallback string) {
	rec, err := a.getAs(r.Context(), caller, c.Request)
	if err != nil {
		a.linkUses.WithLabelValues(linkGone).Inc()
		writeLinkPage(w, http.StatusNotFound, linkPage{Title: "Unknown request", Why: "There is no such request for you to answer. Nothing was changed."})
		return
	}
	outcome := linkFits(c, caller, &rec.Request)
	if outcome == "" {
		outcome = fallback
	}
	a.linkWhy(w, c, &rec.Request, outcome)
}

func (a *API) linkWhy(w http.ResponseWriter, c links.Claim, r *domain.Request, outcome string) {
	a.linkUses.WithLabelValues(outcome).Inc()
	why := "This link was already used: " + a.outcome(r) + ". Nothing was changed."
	if outcome == linkStale {
		why = "This request changed since the link was sent (" + linkConflict(c, r) + "): " + a.outcome(r) +
			". Nothing was changed; answer from the current request instead."
	}
	writeLinkPage(w, http.StatusConflict, a.linkPageOf(c, linkPage{Title: "Link not used", Why: why, Request: r}))
}

// linkConflict says how r changed since the link's revision: for a
// revision r no longer takes, in the HTTP API's words for an answer at
// it (SPEC §12: every surface says so in the same words); an allow that
// only others' approvals came after still applies and is not stale.
func linkConflict(c links.Claim, r *domain.Request) string {
	if !r.Status.Terminal() && !approvals.AnswerableAt(r, c.Revision) {
		return problem.From(approvals.Stale(r, c.Revision)).Detail
	}
	return "revision " + itoa(c.Revision) + ", now " + itoa(r.Revision)
}

// outcome is outcomeText with people by name, the id beside it (SPEC
// §10).
func (a *API) outcome(r *domain.Request) string {
	return outcomeText(r, func(p domain.Ref) string { return a.svc.RefText(r.Tenant, p) })
}

// personText names member m of tenant t: "Ada Lovelace (u-1)", or the id
// alone when they have no name.
func (a *API) personText(t domain.TenantID, m domain.MemberID) string {
	return display.Person(a.svc.PersonName(t, m), string(m))
}

// linkPageOf is p with who the link is for and, for a group's request,
// who has allowed so far, by name.
func (a *API) linkPageOf(c links.Claim, p linkPage) linkPage {
	p.For = a.personText(c.Tenant, c.Person)
	if r := p.Request; r != nil && (r.Quorum() > 1 || r.Approver != nil && r.Approver.Kind == domain.KindGroup) {
		who := make([]string, len(r.Approvals))
		for i, ap := range r.Approvals {
			who[i] = a.svc.RefText(r.Tenant, ap.By)
		}
		p.Quorum = itoa(uint64(len(r.Approvals))) + " of " + itoa(uint64(r.Quorum())) + " approved"
		if len(who) > 0 {
			p.Quorum += " (" + strings.Join(who, ", ") + ")"
		}
	}
	return p
}

// linkOnlyFor is why a link does not answer for someone not signed in
// (sign-in on): it names its person by name (linkNotSignedIn says it).
func (a *API) linkOnlyFor(c links.Claim) string {
	return "This link answers only for " + a.personText(c.Tenant, c.Person) + ", signed in: sign in to the inbox (" + signInPath + ") and open the link again."
}

// linkSentTo is why a link does not answer for the member signed in
// (linkNotSignedIn says it): both people by id, each with their name
// beside it ("u-1 (Ada Lovelace)"), the id first since the id is what
// tells two people of one name apart here.
func (a *API) linkSentTo(c links.Claim, tenant domain.TenantID, member domain.MemberID) string {
	return "This link was sent to " + a.idAndName(c.Tenant, c.Person) + ", and you are signed in as " + a.idAndName(tenant, member) + "."
}

// idAndName is "Ada Lovelace (u-1)", or the id alone, as on every surface.
func (a *API) idAndName(t domain.TenantID, m domain.MemberID) string {
	return display.Person(a.svc.PersonName(t, m), string(m))
}

// linkBad explains a token that does not check out.
func (a *API) linkBad(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, links.ErrExpired):
		a.linkUses.WithLabelValues(linkExpired).Inc()
		writeLinkPage(w, http.StatusGone, linkPage{Title: "Link expired", Why: "The request's deadline has passed: no decision was made in time, and this link changes nothing."})
	case errors.Is(err, links.ErrForged):
		a.linkUses.WithLabelValues(linkForged).Inc()
		writeLinkPage(w, http.StatusForbidden, linkPage{Title: "Invalid link", Why: "This link was not made by this server (its signature does not match). Nothing was changed."})
	default:
		a.linkUses.WithLabelValues(linkMalformed).Inc()
		writeLinkPage(w, http.StatusBadRequest, linkPage{Title: "Invalid link", Why: "This is not a complete decision link (it may have been cut when copied). Nothing was changed."})
	}
}

func confirmTitle(decision string) string {
	if decision == links.Approve {
		return "Approve this call?"
	}
	return "Deny this call?"
}
