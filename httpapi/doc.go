// Package httpapi serves the HTTP API of SPEC §5 on net/http's ServeMux:
// bearer authentication, scopes, strict JSON bodies, problem+json errors
// (approvals.Authenticate, Decode and ProblemFor, shared with the bus
// API), X-Request-ID on every
// response, long-polls woken by the approvals hub, and /healthz, /readyz,
// /metrics. Handlers return errors; one wrapper writes them. The checks run
// in the order 401 → 403 (scope) → 400 → 404 → 409, and bad input never
// reaches the state.
package httpapi
