package rpc

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// Bounds of view/page's limit.
const (
	defaultPageLimit = 50
	maxPageLimit     = 200
)

type pageParams struct {
	Cursor string `json:"cursor"`
	Limit  int    `json:"limit"`
}

// PageResult is the result of view/page: the session's events from the
// cursor on (the cursor's own first), and NextCursor, the first event of
// the next page, when more are stored ("" at the log's end).
type PageResult struct {
	Events     []PageEvent `json:"events"`
	NextCursor string      `json:"nextCursor"`
}

// PageEvent is one event of a session's log, as it was sent live: the
// method (approval/requested, approval/updated or approval/resolved), its
// params at that change, and its cursor.
type PageEvent struct {
	Cursor string `json:"cursor"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

var errCursorGone = problem.New(http.StatusGone, "CursorExpired",
	"this cursor is older than what is kept, or not yours to see; call session/resume for what still waits")

// page is view/page {cursor, limit}: the log of the session the cursor's
// request is shown on (viewOf), read from the requests stream in
// JetStream, where every change of a request is one stored write (SPEC
// §9). A cursor is a change id, <request id>:<revision>, so the same
// cursor reads the same events after a restart and through any process.
// A cursor that does not parse is -32602; one whose write is no longer
// stored (the request removed after its retention, or the revision
// dropped from its history), or that the caller may not see, is
// errCursorGone (410, -32010).
func (c *conn) page(raw json.RawMessage) (any, func(), error) {
	var p pageParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, nil, err
	}
	id, ok := events.ParseMsgID(p.Cursor)
	switch {
	case !ok || id.Request == "":
		return nil, nil, problem.Invalid("cursor", "cursor is a viewCursor or eventCursor: <request id>:<revision>")
	case p.Limit < 0 || p.Limit > maxPageLimit:
		return nil, nil, problem.Invalid("limit", "limit is 1 to 200 (default 50)")
	case p.Limit == 0:
		p.Limit = defaultPageLimit
	}
	res := PageResult{Events: []PageEvent{}}
	session, first, hidden := "", true, false
	err := c.h.svc.Store().ChangesAt(c.ctx, c.caller.Tenant.ID, id, func(ch kvstate.Change) bool {
		ce, err := events.DecodeHeaders(ch.Header)
		var r domain.Request
		if err != nil || json.Unmarshal(ch.Data, &r) != nil {
			return true
		}
		if first {
			first = false
			session, hidden = viewOf(c.h.svc, &r).session, !c.h.svc.Visible(c.caller, &r)
			if hidden {
				return false
			}
		}
		if ce.Type() == events.TypeRequestClaimed || viewOf(c.h.svc, &r).session != session || !c.h.svc.Visible(c.caller, &r) {
			return true
		}
		if len(res.Events) == p.Limit {
			res.NextCursor = events.EventMsgID(ce)
			return false
		}
		res.Events = append(res.Events, c.pageEvent(ce.Type(), &r, events.EventMsgID(ce)))
		return true
	})
	switch {
	case errors.Is(err, kvstate.ErrNotFound) || hidden:
		return nil, nil, errCursorGone
	case err != nil:
		return nil, nil, err
	}
	return res, nil, nil
}

// pageEvent is the notification change typ of r was: resolved when r
// ended, requested when it opened or went to the next stage, updated
// otherwise.
func (c *conn) pageEvent(typ string, r *domain.Request, cursor string) PageEvent {
	e := PageEvent{Cursor: cursor, Method: NotifyUpdated}
	switch {
	case r.Status.Terminal():
		e.Method, e.Params = NotifyResolved, resolvedParams(c.h.svc, r, cursor)
		return e
	case r.Revision == 0, typ == events.TypeRequestUpdated && len(r.Approvals) == 0:
		e.Method = NotifyRequested
	}
	e.Params = requestParams(c.h.svc, c.caller, r, r.JudgeEscalated, cursor)
	return e
}
