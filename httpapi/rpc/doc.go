// Package rpc serves GET /v1/rpc: the live approver protocol of SPEC §8,
// JSON-RPC 2.0 over a WebSocket (github.com/coder/websocket), with the
// protocol's own names and camelCase fields.
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
// The protocol's own (SPEC §8):
//
//   - session/resume {"sessionId"}. Result {"sessionId"}. The connection
//     follows the session from then on (a session subscription: counted
//     in MaxSubscriptions and in Watchers, so a protectedWrite of it may
//     be decided), and right after the result every approval of the
//     session still waiting is re-sent with judgeEscalated false, as the
//     protocol says of a re-issue. From then on a requirement that becomes
//     the caller's to decide (availableChoices not empty) is sent as the
//     request approval/request, never only as a notification: a new
//     request waiting on the caller, a later shell stage, a request
//     escalated or moved to the caller as a backup, each the change that
//     makes it theirs. An ask stands while its requirement does: another
//     person's approval of a group's request (SPEC §12) is notified as
//     approval/updated, and the result to the first ask still applies.
//     Anything else is notified. Resuming a session already followed
//     re-sends what waits (and asks again) and adds nothing.
//   - view/page {"cursor", "limit"?}. Result {"events": [{"cursor",
//     "method", "params"}], "nextCursor"}. The log of the session the
//     cursor's request is shown on, from the cursor on (its own event
//     first), at most limit (1 to 200, default 50) events the caller may
//     see, each as it was notified (approval/requested, approval/updated
//     or approval/resolved, with the params at that change); nextCursor
//     is the first event of the next page, "" at the log's end. A cursor
//     is any viewCursor or eventCursor, <request id>:<revision>.
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
//     of any process is subscribed to its session (by sessionIds or
//     session/resume; see Watchers).
//
// The session log is the requests stream itself (the KV bucket's
// stream in JetStream, kvstate.Store.ChangesAt): every change of a
// request is one stored write carrying its CloudEvent (SPEC §9), so the
// log needs no second write, cannot disagree with the records, and is
// the same after a restart and from every process. A page filters the
// tenant's writes by the session (an index of its own would be a second
// write per change). What is kept is what the bucket keeps: a request's
// last 64 writes, until it is removed request_retention after it ended.
//
// Countersign's own, kept beside them:
//
//   - approval/subscribe {"sessionIds": [...]} or {"inbox": true}, and an
//     optional "viewCursor" (the eventCursor of the last notification the
//     client saw). Result {"subscriptionId", "viewCursor", "resumed"}. It
//     stays for what session/resume cannot do: the inbox (the requests
//     waiting on the caller across every session, which no session names),
//     and resuming a live stream exactly after an eventCursor rather than
//     re-sending what waits. If the cursor names a change the caller may
//     see, the notifications resume right after it ("resumed": true):
//     nothing missed, nothing repeated. Otherwise ("resumed": false,
//     "viewCursor": "") the server first sends approval/requested for
//     every pending request in scope (a snapshot, from this process's
//     request mirror, with the record's judgeEscalated: a first showing
//     to this subscription), then the live changes from the position the
//     feed had when the subscribe began. With several processes, a change
//     made through another one in the moment before the subscribe, and
//     not yet in this mirror, is not sent; the next change of that
//     request is. A session subscription covers the requests shown on
//     those sessions that the caller may see (SPEC §5); the inbox covers
//     those waiting on the caller or answered by it (admin: all). At most
//     8 subscriptions per connection, 100 sessions per subscription. Its
//     requirements are notifications (approval/requested) unless the
//     connection has called session/resume.
//   - approval/unsubscribe {"subscriptionId"}. Result {"subscriptionId"}.
//
// # Requests (server to client)
//
//   - approval/request: the same params as approval/requested, with a
//     string id of the server's. The client's result {"choiceId",
//     "reason"?} is approval/decide on the requirement the request named
//     (its currentRequirementId). Each request takes one response: an
//     error response leaves the approval waiting, and a result the
//     decision refuses (a stale requirement, a choice not offered, a
//     missing reason, a malformed result) changes nothing; the client
//     learns what happened from the notifications that follow, and may
//     decide later with approval/decide. A response to no request of the
//     connection is ignored. Requests the client leaves unanswered are
//     bounded (1024 per connection; beyond, notifications).
//
// # Notifications (server to client)
//
// Every notification carries eventCursor: the id of the change it comes
// from, <request id>:<revision> (a snapshot entry: the request's current
// revision). The connection is sent each change once, however many of its
// subscriptions cover the request.
//
//   - approval/requested: the protocol's ApprovalRequestParams. approvalId is
//     the request id; itemId the tool-call view item (the adapter's
//     tool_call_id, else the request id); taskId the task running the
//     call (the turn, else the session, else the agent: countersign has
//     no task of its own); toolCallId, toolName and turnId the record's;
//     rawArgs the arguments as stored; sessionId the session it is shown
//     on; sourceRange {"from", "to"}, the stored changes the params were
//     folded from (<id>:0 to <id>:<revision>; opaque); viewCursor the
//     change that opened the request (<request id>:0; kept by every
//     re-send, and readable by view/page); currentRequirementId
//     {"sourceIndex": the current shell stage (0 for other kinds),
//     "revision": the record's revision}. A shell subject's stages carry
//     allowedBy, scope and allowedAt (null while the stage waits).
//     Besides the protocol's fields: capability, reason, deadlineAt,
//     approver, requiredApprovals and approvals. Every principal shown
//     (approver, approvals[].by, allowedBy, decision.by) is {"kind",
//     "id", "name"?}: a person's name (SPEC §10, the config's else their
//     ID token's) beside the id, absent when they have none.
//     reviewerReason is present only when the record has one.
//     subagentOrigin {"agentId", "parentAgentId"} only on a projected
//     approval: a registered subagent spawned by a request in a session
//     (its parent's; the agent record keeps it) has its approvals shown
//     on that session, sessionId the parent's, whatever session its own
//     request names; every other approval omits it. cuaCardFacts
//     {"page", "window", "steps"} only for subject kind computer_use,
//     from the arguments "page" (or "url"), "window" and "steps" (or
//     "action"). It is sent when a request enters the scope (created,
//     escalated into the caller's inbox), again for each stage change
//     (dev.countersign.request.updated) with the next
//     currentRequirementId, keeping viewCursor and judgeEscalated.
//   - approval/updated: the same params, for any other change of a
//     pending request already shown (escalation, endorsement, another
//     person's approval): the choices change with the approver. After
//     session/resume, a change that makes the requirement the caller's
//     comes as approval/request instead.
//   - approval/resolved {"approvalId", "status", "decision",
//     "eventCursor"} when the request is terminal.
//
// judgeEscalated, as SPEC §8 says, is false when the server re-issues a
// request on session/resume (after a server restart or a reconnect);
// a live approval/requested, and a first showing in approval/subscribe's
// snapshot, carry the record's judge_escalated, and a stage re-send the
// value its opening had.
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
//	400 InvalidRequest   -32602     410 CursorExpired        -32010
//	401 Unauthenticated  -32001     413 PayloadTooLarge      -32013
//	403 Forbidden        -32003     422 IdempotencyKeyReused -32022
//	404 RequestNotFound  -32004     429 RateLimited          -32029
//	409 RequestConflict  -32009     503 Unavailable          -32053
//	500 Internal         -32603
//
// view/page with a cursor that does not parse (or a grant's) is -32602
// (field cursor); with a cursor whose change is no longer kept, or not
// the caller's to see, 410 CursorExpired (-32010): session/resume gives
// what still waits. A bad session/resume or view/page follows nothing.
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
