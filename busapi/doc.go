// Package busapi serves the approval API on NATS (SPEC §9 "The bus API"):
// a nats.go micro service named countersign with one endpoint per
// operation on countersign.<tenant>.api.<op>.
//
// The bus is another surface of the same use cases, not a second copy of
// them: every message is authenticated by its Authorization header with
// approvals.Service.Authenticate (NATS does not tell a responder who sent
// a message), its body is decoded strictly with approvals.Decode, each
// operation calls the one approvals method its HTTP endpoint calls, and
// every refusal is approvals.ProblemFor's problem, the same status, error,
// field and reason as over HTTP.
//
// A token of one tenant on another tenant's subject is 403 Forbidden (the
// subject's tenant is never looked up, so the answer reveals nothing).
// Each token has at most Config.MaxInFlight messages in flight; more are
// refused at once with 429 RateLimited and Retry-After, so a flood from
// one token cannot starve the others. Long-polls are bounded by the
// service's hub, as over HTTP.
package busapi
