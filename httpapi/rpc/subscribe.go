package rpc

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// Bounds of one subscription's sessions.
const (
	maxSessions  = 100
	maxSessionID = 256
)

type subscribeParams struct {
	SessionIDs []string `json:"sessionIds"`
	Inbox      bool     `json:"inbox"`
	ViewCursor string   `json:"viewCursor"`
}

func (p *subscribeParams) validate() error {
	switch {
	case p.Inbox && len(p.SessionIDs) > 0, !p.Inbox && len(p.SessionIDs) == 0:
		return problem.Invalid("sessionIds", `give either "sessionIds" (non-empty) or "inbox": true`)
	case len(p.SessionIDs) > maxSessions:
		return problem.Invalid("sessionIds", "at most 100 sessions per subscription")
	}
	for _, s := range p.SessionIDs {
		if s == "" || len(s) > maxSessionID {
			return problem.Invalid("sessionIds", "a session id is 1 to 256 bytes")
		}
	}
	return nil
}

// SubscribeResult is the result of approval/subscribe: Resumed when the
// given viewCursor was found (the notifications resume right after it,
// with no snapshot); otherwise a snapshot of the pending requests follows,
// then live notifications, and ViewCursor is "".
type SubscribeResult struct {
	SubscriptionID string `json:"subscriptionId"`
	ViewCursor     string `json:"viewCursor"`
	Resumed        bool   `json:"resumed"`
}

func (c *conn) subscribe(raw json.RawMessage) (any, func(), error) {
	var p subscribeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, nil, err
	}
	if err := p.validate(); err != nil {
		return nil, nil, err
	}
	from, found, err := c.h.svc.EventsAfter(c.ctx, c.caller, p.ViewCursor)
	if err != nil {
		return nil, nil, err
	}
	s := newSubscription(c, p.SessionIDs, from)
	if !found {
		if s.snapshot, err = c.pendingIn(s.sessions); err != nil {
			s.cancel()
			return nil, nil, err
		}
		p.ViewCursor = ""
	}
	if err := c.add(s); err != nil {
		return nil, nil, err
	}
	return SubscribeResult{SubscriptionID: s.id, ViewCursor: p.ViewCursor, Resumed: found}, func() { c.spawn(s.run) }, nil
}

// add registers s (at most MaxSubscriptions) and its watched sessions.
func (c *conn) add(s *subscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) >= c.h.cfg.MaxSubscriptions {
		s.cancel()
		return errTooManySubs
	}
	c.nextID++
	s.id = "sub-" + strconv.Itoa(c.nextID)
	c.subs[s.id] = s
	c.h.watchers.add(s.watched())
	return nil
}

type unsubscribeParams struct {
	SubscriptionID string `json:"subscriptionId"`
}

func (c *conn) unsubscribe(raw json.RawMessage) (any, func(), error) {
	var p unsubscribeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.subs[p.SubscriptionID]
	if !ok {
		return nil, nil, errNoSub
	}
	delete(c.subs, p.SubscriptionID)
	c.h.watchers.remove(s.watched())
	s.cancel()
	return map[string]string{"subscriptionId": p.SubscriptionID}, nil, nil
}

// subscription sends the notifications of one scope: sessions, or (nil)
// the caller's inbox. What was sent is the connection's (conn.shown).
type subscription struct {
	id       string
	c        *conn
	ctx      context.Context
	cancel   context.CancelFunc
	sessions map[string]bool
	from     approvals.EventsFrom
	snapshot []kvstate.Record
	judged   func(*domain.Request) bool // judgeEscalated of a snapshot entry
}

func newSubscription(c *conn, sessionIDs []string, from approvals.EventsFrom) *subscription {
	s := &subscription{c: c, from: from, judged: recorded}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	if len(sessionIDs) > 0 {
		s.sessions = map[string]bool{}
		for _, id := range sessionIDs {
			s.sessions[id] = true
		}
	}
	return s
}

// watched returns the watcher keys of s's sessions.
func (s *subscription) watched() []string {
	keys := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		keys = append(keys, watchKey(s.c.caller.Tenant.ID, id))
	}
	return keys
}

// run sends the snapshot (judgeEscalated as judged gives it), then the
// live changes until the subscription or the connection ends. A change
// feed that fails closes the connection (1011): the client reconnects and
// resumes.
func (s *subscription) run() {
	s.c.reissue(s.snapshot, s.judged)
	s.snapshot = nil
	err := s.c.h.svc.Events(s.ctx, s.c.caller, s.from, s.onEvent)
	if err != nil && s.ctx.Err() == nil {
		s.c.h.cfg.Logger.Warn("rpc: change feed failed", "err", err)
		s.c.close(websocket.StatusInternalError, "change feed failed; resume")
	}
}
