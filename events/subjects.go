package events

import (
	"strconv"
	"strings"

	"github.com/countersign/countersign/domain"
)

// CloudEvent types (SPEC §9).
const (
	TypeRequestCreated   = "dev.countersign.request.created"
	TypeRequestEscalated = "dev.countersign.request.escalated"
	TypeRequestDecided   = "dev.countersign.request.decided"
	// TypeRequestUpdated: a stage of a shell request was allowed and the
	// next one waits on the same decider (SPEC §8), or an approval of a
	// quorum was counted (SPEC §12).
	TypeRequestUpdated   = "dev.countersign.request.updated"
	TypeRequestExpired   = "dev.countersign.request.expired"
	TypeRequestCancelled = "dev.countersign.request.cancelled"
	TypeRequestClaimed   = "dev.countersign.request.claimed"
	TypeGrantCreated     = "dev.countersign.grant.created"
	TypeGrantRevoked     = "dev.countersign.grant.revoked"
)

const typePrefix = "dev.countersign."

// ShortTypes are the short forms of every request and grant event type
// (SPEC §9's list), in its order: the types a webhook may subscribe to. A
// new copy on each call.
func ShortTypes() []string {
	out := []string{}
	for _, t := range []string{TypeRequestCreated, TypeRequestUpdated, TypeRequestEscalated, TypeRequestDecided,
		TypeRequestExpired, TypeRequestCancelled, TypeRequestClaimed, TypeGrantCreated, TypeGrantRevoked} {
		out = append(out, ShortType(t))
	}
	return out
}

// ShortType is an event type without its dev.countersign. prefix, as
// subjects and webhook endpoints name it: request.created, grant.revoked.
func ShortType(typ string) string { return strings.TrimPrefix(typ, typePrefix) }

// SubjectRoot prefixes every countersign subject.
const SubjectRoot = "countersign"

// EventSubject is where every event of type typ in tenant goes:
// countersign.<tenant>.events.<type without dev.countersign.>.
func EventSubject(tenant domain.TenantID, typ string) string {
	return SubjectRoot + "." + string(tenant) + ".events." + ShortType(typ)
}

// DecideSubject is a decider's work subject:
// countersign.<tenant>.decide.person.<id> or .decide.agent.<id>.
func DecideSubject(tenant domain.TenantID, decider domain.Ref) string {
	return SubjectRoot + "." + string(tenant) + ".decide." + decider.Kind + "." + decider.ID
}

// DecideFilter matches every decider work subject of every tenant.
const DecideFilter = SubjectRoot + ".*.decide.>"

// AgentWorkFilter matches the work subjects of agent deciders, the only
// work countersign's own decider processes act on (they offer the review
// to the agent's runtimes).
const AgentWorkFilter = SubjectRoot + ".*.decide." + domain.KindAgent + ".>"

// PeopleWorkFilters match the work subjects of people and groups: the
// request waits in their inbox, and no countersign process consumes them.
var PeopleWorkFilters = []string{
	SubjectRoot + ".*.decide." + domain.KindPerson + ".>",
	SubjectRoot + ".*.decide." + domain.KindGroup + ".>",
}

// EventsFilter matches every event subject of every tenant.
const EventsFilter = SubjectRoot + ".*.events.>"

// MsgID is the Nats-Msg-Id that deduplicates one change of a request.
func MsgID(id domain.RequestID, revision uint64) string {
	return string(id) + ":" + strconv.FormatUint(revision, 10)
}

// GrantMsgID deduplicates a grant's creation or revocation.
func GrantMsgID(id domain.GrantID, revoked bool) string {
	if revoked {
		return string(id) + ":revoked"
	}
	return string(id) + ":created"
}

// ChangeID names one change: a request's revision, or a grant's creation
// or revocation. Its text is the change's Nats-Msg-Id.
type ChangeID struct {
	Request  domain.RequestID // set for a request's change
	Revision uint64
	Grant    domain.GrantID // set for a grant's change
	Revoked  bool
}

// ParseMsgID parses a Nats-Msg-Id made by MsgID or GrantMsgID.
func ParseMsgID(s string) (ChangeID, bool) {
	id, suffix, ok := strings.Cut(s, ":")
	if !ok || !domain.ValidGeneratedID(id) {
		return ChangeID{}, false
	}
	switch {
	case strings.HasPrefix(id, "req_"):
		rev, err := strconv.ParseUint(suffix, 10, 64)
		if err != nil || strconv.FormatUint(rev, 10) != suffix {
			return ChangeID{}, false
		}
		return ChangeID{Request: domain.RequestID(id), Revision: rev}, true
	case strings.HasPrefix(id, "grt_") && (suffix == "created" || suffix == "revoked"):
		return ChangeID{Grant: domain.GrantID(id), Revoked: suffix == "revoked"}, true
	}
	return ChangeID{}, false
}

// Source is the CloudEvent source of a tenant's events.
func Source(tenant domain.TenantID) string { return "/countersign/" + string(tenant) }

// TenantEventsFilter matches every event subject of one tenant.
func TenantEventsFilter(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".events.>"
}

// Internal headers on a state write, telling the outbox what the change
// derives without decoding the record. They are not CloudEvent attributes
// and are not copied to events.
const (
	// HeaderWorkTo names the decider a created or escalated request now
	// waits on: "<kind>.<id>".
	HeaderWorkTo = "Countersign-Work-To"
	// HeaderGrants is "1" on a decision that leaves grants or delegated
	// work (Request.Delegates).
	HeaderGrants = "Countersign-Grants"
)

// WorkTo encodes a decider for HeaderWorkTo.
func WorkTo(d domain.Ref) string { return d.Kind + "." + d.ID }

// ParseWorkTo decodes HeaderWorkTo.
func ParseWorkTo(s string) (domain.Ref, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return domain.Ref{Kind: s[:i], ID: s[i+1:]}, i > 0 && i < len(s)-1
		}
	}
	return domain.Ref{}, false
}

// Bus API operations (SPEC §9 "The bus API").
const (
	OpSubmit = "submit"
	OpGet    = "get"
	OpList   = "list"
	OpAnswer = "answer"
	OpCancel = "cancel"
	OpClaim  = "claim"
	OpGrants = "grants"
	OpRevoke = "revoke"
)

// APIOps lists the bus API operations.
var APIOps = []string{OpSubmit, OpGet, OpList, OpAnswer, OpCancel, OpClaim, OpGrants, OpRevoke}

// APISubject is where a tenant's clients send op:
// countersign.<tenant>.api.<op>.
func APISubject(tenant domain.TenantID, op string) string {
	return SubjectRoot + "." + string(tenant) + ".api." + op
}

// APIFilter matches op of every tenant: countersign.*.api.<op>.
func APIFilter(op string) string { return SubjectRoot + ".*.api." + op }

// TenantOfAPISubject returns the tenant of an api subject; false if subj
// is not one.
func TenantOfAPISubject(subj string) (domain.TenantID, bool) {
	parts := strings.Split(subj, ".")
	if len(parts) != 4 || parts[0] != SubjectRoot || parts[2] != "api" || parts[1] == "" {
		return "", false
	}
	return domain.TenantID(parts[1]), true
}

// TenantAPIFilter matches every bus API subject of one tenant:
// countersign.<tenant>.api.>.
func TenantAPIFilter(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".api.>"
}

// TypeReviewRequested is the type of an offer of a review to an agent
// decider's runtime (SPEC §9, "Agent deciders on the bus"). It is sent as a
// core NATS request, never stored in a stream.
const TypeReviewRequested = "dev.countersign.review.requested"

// ReviewSubject is where agent's runtimes take review offers:
// countersign.<tenant>.review.<agent>.
func ReviewSubject(tenant domain.TenantID, agent domain.AgentID) string {
	return SubjectRoot + "." + string(tenant) + ".review." + string(agent)
}

// ReviewFilter matches every review subject of every tenant.
const ReviewFilter = SubjectRoot + ".*.review.*"

// ReviewQueue is the queue group in which every runtime of one agent
// subscribes its review subject, so each offer reaches one of them.
const ReviewQueue = "countersign-review"

// WatchSubject is where the processes whose live clients watch session of
// tenant answer "watched" (SPEC §8, protected writes):
// countersign.<tenant>.watch.<the first 32 hex digits of the session's
// SHA-256>. Only countersign's own connections may use it; no stream
// captures it.
func WatchSubject(tenant domain.TenantID, session string) string {
	return SubjectRoot + "." + string(tenant) + ".watch." + domain.HashToken(session)[:32]
}

// InboxPrefix is the reply-inbox prefix of one principal of a tenant on
// the bus: _INBOX.<tenant>.<kind>.<id>, e.g. _INBOX.acme.agent.agt_main.
// A client sets it (nats.go nats.CustomInboxPrefix, the Node client's
// inboxPrefix, natscli --inbox-prefix) because its token may subscribe
// only below it. An id outside [A-Za-z0-9_-] (a service name may be
// anything) is written "~" and the first 32 hex digits of its SHA-256, so
// the prefix is always four plain subject tokens and never a wildcard.
func InboxPrefix(tenant domain.TenantID, principal domain.Ref) string {
	return TenantInboxPrefix(tenant) + "." + principal.Kind + "." + subjectToken(principal.ID)
}

// TenantInboxPrefix is the prefix of every reply inbox of one tenant's
// principals: _INBOX.<tenant>.
func TenantInboxPrefix(tenant domain.TenantID) string {
	return "_INBOX." + string(tenant)
}

// InboxOfTenant reports whether reply is a literal subject below some
// principal's InboxPrefix in tenant: _INBOX.<tenant>.<kind>.<id>.<more>,
// kind a token's principal kind (person, agent, service). Where a reply
// may go when the sender is known only by the tenant of its subject.
func InboxOfTenant(tenant domain.TenantID, reply string) bool {
	rest, ok := strings.CutPrefix(reply, TenantInboxPrefix(tenant)+".")
	if !ok {
		return false
	}
	toks := strings.Split(rest, ".")
	if len(toks) < 3 || (toks[0] != domain.KindPerson && toks[0] != domain.KindAgent && toks[0] != domain.KindService) {
		return false
	}
	for _, tok := range toks {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return false
		}
	}
	return true
}

// InboxFilter matches every reply subject under InboxPrefix.
func InboxFilter(tenant domain.TenantID, principal domain.Ref) string {
	return InboxPrefix(tenant, principal) + ".>"
}

// subjectToken returns id when it is a configured or generated id (both
// plain subject tokens), else "~" and a hash of it.
func subjectToken(id string) string {
	if domain.ConfigIDPattern.MatchString(id) {
		return id
	}
	return "~" + domain.HashToken(id)[:32]
}

// BusService is the nats.go micro service name of the bus API.
const BusService = "countersign"

// DiscoveryQueue is the queue group in which countersign answers micro
// discovery itself, holding discovery replies to the bus API's rule (the
// caller's own inbox only); the embedded server lets its responder
// subscribe to $SRV only in this group, so micro's own control handlers,
// which answer wherever the asker says, receive nothing.
const DiscoveryQueue = "countersign-discovery"

// DiscoverySubjects are the micro discovery subjects a token with scope
// admin may publish to, so that `nats micro ls` and `nats micro info
// countersign` find the bus API: $SRV.PING, $SRV.INFO and $SRV.STATS,
// bare, for the service and for one instance. STATS spans tenants (counts
// per endpoint on wildcard subjects, the last refusal's code), so no other
// tenant token reaches them (SPEC §9 "Discovery").
func DiscoverySubjects() []string {
	var out []string
	for _, verb := range []string{"PING", "INFO", "STATS"} {
		out = append(out, "$SRV."+verb, "$SRV."+verb+"."+BusService, "$SRV."+verb+"."+BusService+".*")
	}
	return out
}

// TypeReviewWithdrawn tells a person's workers that a request they were
// told of no longer waits on them (SPEC §9, "People's workers on the
// bus"). Like TypeReviewRequested it is a core NATS message, never stored.
const TypeReviewWithdrawn = "dev.countersign.review.withdrawn"

// PeopleSubject is where the workers of person member hear of the reviews
// that come to wait on them, and stop: countersign.<tenant>.people.<member>
// (an id outside [A-Za-z0-9_-] is written as in InboxPrefix).
func PeopleSubject(tenant domain.TenantID, member domain.MemberID) string {
	return SubjectRoot + "." + string(tenant) + ".people." + subjectToken(string(member))
}

// TenantPeopleFilter matches the people subjects of every person of one
// tenant.
func TenantPeopleFilter(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".people.*"
}

// HeaderWasTo, an internal header on a state write like HeaderWorkTo,
// names the decider a pending request waited on before the change:
// "<kind>.<id>". The outbox withdraws the review from the people it
// named and who no longer wait (SPEC §9, "People's workers on the bus").
const HeaderWasTo = "Countersign-Was-To"
