// Package httpapi serves the HTTP API of SPEC §5 on net/http's ServeMux:
// bearer authentication, scopes, strict JSON bodies, problem+json errors
// (approvals.Admit, Decode, WithTraceparent and RequestPage, and
// problem.From, shared with the bus API: no rule of its own), X-Request-ID on every
// response, long-polls woken by the approvals hub, and /healthz, /readyz,
// /metrics. Handlers return errors; one wrapper writes them. The checks run
// in the order 401 → 403 (scope) → 400 → 404 → 409, and bad input never
// reaches the state.
//
// People also answer outside the bearer-token API, always through
// approvals.Service.Answer as the person, with scope once and the revision
// they were shown: decision links (GET /d/{token} shows an HTML
// confirmation page and never decides; its POST answers once; see package
// links for the token) and Slack button clicks (POST
// /v1/slack/interactions, verified with the tenant's Slack signing secret
// and mapped to a member by slack_user_id).
package httpapi
