// Package busapi serves the approval API on NATS (SPEC §9 "The bus API"):
// a nats.go micro service named countersign with one endpoint per
// operation on countersign.<tenant>.api.<op>.
//
// The bus is another surface of the same use cases, not a second copy of
// them: every message is authenticated by its Authorization header with
// approvals.Service.Authenticate (NATS does not tell a responder who sent
// a message), and each subject's operation is bound to its endpoint in
// approvals (approvals.Service.Endpoint: the operation's scope and
// principal kind, the strict decode of the body, the one use case, the
// result's shape), the same endpoint HTTP binds to. A message's data is
// the endpoint's body, whose fields carry what HTTP's path and query do
// ("id", "turn", "wait", a list's filter), and every refusal is
// problem.From's problem, the same status, error, field and reason as
// over HTTP.
//
// A message is answered only into its caller's own inbox: its reply
// subject must be a literal subject below events.InboxPrefix of the token's
// principal (the client port lets a token subscribe only there). Anything
// else (another principal's inbox, countersign's own connections' inboxes,
// any other subject the service's connection could publish to) gets
// nothing published at all, counts as code 403 in
// countersign_bus_requests_total and is logged: an answer there would be a
// reply forged into someone else's request. A message without
// Authorization, or whose token does not authenticate, has no caller: it
// is known only by its subject's tenant, whose connections (and
// countersign's own) alone may publish there, so it gets the error reply
// 401 Unauthenticated when its reply subject is a literal subject below
// some principal's inbox prefix of that tenant (events.InboxOfTenant), and
// nothing otherwise; both count as code 401 (SPEC §9: never silence). The
// checks run in this order: the token (401), the reply subject, then scope
// and tenant (403), size (413) and the in-flight bound (429).
//
// A token of one tenant on another tenant's subject is 403 Forbidden (the
// subject's tenant is never looked up, so the answer reveals nothing).
// Each token has at most Config.MaxInFlight messages in flight; more are
// refused at once with 429 RateLimited and Retry-After, so a flood from
// one token cannot starve the others. Long-polls are bounded by the
// service's hub, as over HTTP.
package busapi
