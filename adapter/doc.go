// Package adapter is the agent side of countersign in synchronous mode: it
// holds an intercepted tool call open while approval is sought, and lets the
// call run at most once, only with a valid approval for exactly that call.
//
// A Client is made with New for one server and one agent token. Client.Do
// takes a Call (the capability, the exact arguments, the harness's session,
// turn and tool-call ids) and a run function, and returns an Outcome of
// exactly one Kind:
//
//   - Ran: approved, the approval claimed, run called (Do returns run's error).
//   - Denied: a decider, a policy, a grant or a rule said no; the Outcome
//     names who, with their note as quoted data.
//   - Expired: no decision was made before the request's deadline. Nobody
//     said no, and the wording never says so.
//   - ApprovalExpired: approved, but the approval expired before the call
//     could start.
//   - Cancelled: the call was abandoned (ctx cancelled; the request is then
//     cancelled on the server), or its requester cancelled the request.
//   - NotObtained: approval could not be obtained: countersign unreachable or
//     refusing, the adapter's wait limit passed (the request is cancelled),
//     the approval is bound to a different call (ErrDigestMismatch) or was
//     already used (ErrAlreadyClaimed). Nobody said no.
//
// Outcome.String words each kind for the agent; Outcome.Err wraps one of the
// sentinel errors in errors.go.
//
// The contract, in order (SPEC §7, the synchronous mode):
//
//  1. Submit POST /v1/requests with a fresh Idempotency-Key (or
//     Call.IdempotencyKey, to recover an earlier submission). A lost or
//     failed submit is retried with the same key and body, which recovers
//     the same request, for up to WithUnreachableLimit.
//  2. A terminal record in the submit's answer is applied at once; otherwise
//     GET /v1/requests/{id}?wait= is long-polled until the record is
//     terminal. A poll that ends pending, a connection error, a 5xx or a 429
//     (with its Retry-After) is not a decision: poll again, with jittered
//     exponential backoff. A server restart is survived this way.
//  3. The harness's wait limit is an input (WithWaitLimit, and the deadline of
//     the ctx given to Do). The requested timeout is shortened to fit inside
//     it with a margin (WithMargin, at most a quarter of the limit); Do gives
//     up half a margin before the limit: the call does not run, the request
//     is cancelled, and the Outcome is NotObtained with ErrWaitLimit. Without
//     a limit Do waits until the request's deadline_at plus half a margin.
//  4. Right before run: decision.expires_at is checked against the clock
//     (WithClock) corrected by the server's Date headers, conservatively
//     (an approval may be judged expired up to about a second early); the
//     record's call_digest is checked against the digest of this very call
//     (domain.CallDigest over the record's tenant and agent and the Call);
//     then the approval is claimed with POST /v1/requests/{id}/claim. Only a
//     200 lets run start. The claim is one compare-and-set on the server, so
//     an approval runs one call at most once, across processes: of two
//     adapters recovering the same request, one runs and the other gets
//     ErrAlreadyClaimed. A claim whose call then never ran (a crash) leaves
//     the approval spent; the call fails closed and must be submitted again.
//     A claim retried after a lost 200 also fails closed.
//  5. If ctx is cancelled while the call waits, the request is cancelled on
//     the server, best effort, within WithCancelTimeout even though ctx is
//     done, and the Outcome is Cancelled with ErrAbandoned.
//
// A person may approve a call with edits (SPEC §5): the record's arguments
// and call_digest are then the edited call's. A Call with TakeEdits runs
// it: the digest checked and claimed is that of this call with the edited
// arguments, and TakeEdits gets them before run. Without TakeEdits the
// call does not run (NotObtained, ErrEdited).
//
// Everything fails closed: an answer the adapter cannot trust (ErrBadResponse),
// a refusal (ErrRefused), or no answer at all means the call does not run.
//
// Guard wraps a Go tool function into a gated one for agents written in Go.
// The integrations built on this package are the countersign hook command
// (Claude Code, Codex, Gemini CLI) and the MCP proxy (package mcpproxy).
package adapter
