// Package httpapi serves the HTTP API of SPEC §5 on net/http's ServeMux.
// Each route binds to its operation's endpoint in approvals
// (approvals.Service.Endpoint: Permit, the strict decode, the use case,
// the result's shape; auth.go's endpoint): it authenticates (the bearer
// token, or with sign-in the session, approvals.Authenticate's Sessions
// hook), hands over the path's values, a GET's query and the body, and
// writes the result; problem.From writes refusals as problem+json, with
// no rule of its own. Also: X-Request-ID on every response, long-polls
// woken by the approvals hub, and /healthz, /readyz, /metrics. Handlers
// return errors; one wrapper writes them. The checks run in the order 401
// → 403 (scope) → 400 → 404 → 409, and bad input never reaches the state.
//
// People also answer outside the bearer-token API, through the same
// endpoints as the person (clicks.go), with scope once and the revision
// they were shown: decision links (GET /d/{token} shows an HTML
// confirmation page and never decides; its POST answers once; see package
// links for the token) and Slack button clicks (POST
// /v1/slack/interactions, verified with the tenant's Slack signing secret
// and mapped to a member by slack_user_id).
package httpapi
