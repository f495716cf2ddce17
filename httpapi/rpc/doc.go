// Package rpc serves GET /v1/rpc: the live approver protocol of SPEC §8,
// JSON-RPC 2.0 over a WebSocket (github.com/coder/websocket), with seed
// 001's names and camelCase fields.
//
// # Connecting
//
// The upgrade request carries Authorization: Bearer <token> (scope
// approvals:read; deciding also takes approvals:write); a browser, which
// cannot set that header, offers the subprotocols countersign.v1 and
// bearer.<token>, and the server selects countersign.v1. A missing or
// unknown token is 401, a token without approvals:read 403, a request
// that is not a WebSocket upgrade 400, each as problem+json before any
// upgrade.
//
// # Methods (client to server)
//
//   - approval/subscribe {"sessionIds": [...]} or {"inbox": true}, and an
//     optional "viewCursor" (the eventCursor of the last notification the
//     client saw). Result {"subscriptionId", "viewCursor", "resumed"}. If
//     the cursor names a change the caller may see, the notifications
//     resume right after it ("resumed": true): nothing missed, nothing
//     repeated. Otherwise ("resumed": false, "viewCursor": "") the server
//     first sends approval/requested for every pending request in scope
//     (a snapshot, from this process's request mirror), then the live
//     changes from the position the feed had when the subscribe began
//     (a change in both is sent once: older revisions are skipped). With
//     several processes, a change made through another one in the
//     moment before the subscribe, and not yet in this mirror, is not
//     sent; the next change of that request is. A session subscription covers the requests of those
//     sessions the caller may see (SPEC §5); the inbox covers those
//     waiting on the caller or answered by it (admin: all). At most 8
//     subscriptions per connection, 100 sessions per subscription.
//   - approval/unsubscribe {"subscriptionId"}. Result {"subscriptionId"}.
//   - approval/decide {"approvalId", "requirementId", "choiceId",
//     "reason"?, "rule"?}. Result {"approvalId", "status", "revision"}.
//     It is approvals.Service.Answer, the use case of POST
//     /v1/requests/{id}, with expected = requirementId.revision: the same
//     compare-and-set, events and errors. It is matched by approvalId,
//     never by the JSON-RPC id (the notification it causes may arrive
//     before its result). A requirementId whose sourceIndex or
//     revision is not current, a choice not offered to the caller, and
//     deny_with_reason without a reason are refused. A protectedWrite
//     request is decided, here as on every surface, only while a client
//     of any process is subscribed to its session (by sessionIds; see
//     Watchers).
//
// # Notifications (server to client)
//
// Every notification carries eventCursor: the id of the change it comes
// from, <request id>:<revision> (a snapshot entry: the request's current
// revision). Resuming after the last one seen misses nothing and repeats
// nothing.
//
//   - approval/requested: seed 001's ApprovalRequestParams. approvalId is
//     the request id, itemId the request id too (the view item is the
//     request), taskId the requesting agent, toolCallId, toolName, turnId
//     and sessionId the record's, rawArgs the arguments as stored,
//     sourceRange the eventCursor (opaque), viewCursor the change that
//     opened the request (<request id>:0; kept by every re-send),
//     currentRequirementId {"sourceIndex": the current shell stage (0
//     for other kinds), "revision": the record's revision}.
//     reviewerReason is present only when the record has one;
//     subagentOrigin {"agentId", "parentAgentId"} only for a registered
//     subagent's request (SPEC §1: subagents are registered when spawned;
//     a native subagent shares its parent's session, so its approval
//     shows on that session). It is sent when a request enters the scope
//     (created, escalated into the caller's inbox), again for each stage
//     change (dev.countersign.request.updated) with the next
//     currentRequirementId, keeping viewCursor and judgeEscalated.
//   - approval/updated: the same params, for any other change of a
//     pending request already shown (escalation, endorsement): the
//     choices change with the approver.
//   - approval/resolved {"approvalId", "status", "decision",
//     "eventCursor"} when the request is terminal.
//
// judgeEscalated, as seed 001 says, is false when the server re-issues a
// request: every snapshot entry is a re-issue (after a server restart or a
// reconnect without a usable cursor the client cannot tell a new showing
// from an old one). A live approval/requested carries the record's
// judge_escalated, and a stage re-send the value its opening had.
//
// # availableChoices
//
// Built by the server only, for the caller: ids allow_once,
// allow_session, allow_always, deny, deny_with_reason (objects
// {"choiceId", "label", "decision", "scope", "requiresReason"}). A
// caller that is not the current approver, or lacks approvals:write,
// gets []. A protectedWrite request offers allow_once and deny (labelled
// Reject). A person offers every allow their policy permits
// (allow_session only when the request has a session), or none; an
// agent that holds the capability (SPEC §3) up to the scope of the grant
// by which it holds; an agent that does not hold endorses, so
// allow_once; an unknown subject kind, allow_once only. deny and
// deny_with_reason always follow.
//
// # Errors
//
// -32700 parse error (not JSON), -32600 invalid request (not a strict
// JSON-RPC 2.0 request object, an empty batch), -32601 method not found,
// -32602 invalid params. A use case's refusal maps its problem's HTTP
// status to a code, with the problem JSON (its "error", "field", ...) as
// the error's data:
//
//	400 InvalidRequest   -32602     409 RequestConflict      -32009
//	401 Unauthenticated  -32001     413 PayloadTooLarge      -32013
//	403 Forbidden        -32003     422 IdempotencyKeyReused -32022
//	404 RequestNotFound  -32004     429 RateLimited          -32029
//	500 Internal         -32603     503 Unavailable          -32053
//
// A batch is answered with one array; a bad member gets its error and the
// others are still answered. Notifications from the client get no answer.
//
// # Limits
//
// A message over 1 MiB closes the connection with 1009. Each connection
// has a bounded send queue (256 messages); a client whose queue is full,
// or who does not take a message within 10s, is dropped (1013, or 1008)
// and never blocks the others. Clients are pinged every 30s and dropped
// when they do not answer. At shutdown every connection closes with 1001.
package rpc
