package rpc

import (
	"encoding/json"

	"github.com/countersign/countersign/problem"
)

type resumeParams struct {
	SessionID string `json:"sessionId"`
}

// ResumeResult is the result of session/resume.
type ResumeResult struct {
	SessionID string `json:"sessionId"`
}

// resume is session/resume {sessionId}: the connection follows the
// session from now on (a session subscription, counted in
// MaxSubscriptions and in Watchers), and every approval of it still
// waiting is re-sent right after the result with judgeEscalated false.
// From then on the connection is shown requirements it may decide as
// approval/request. Resuming a session the connection already follows
// re-sends its waiting approvals again and adds nothing.
func (c *conn) resume(raw json.RawMessage) (any, func(), error) {
	var p resumeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, nil, err
	}
	if p.SessionID == "" || len(p.SessionID) > maxSessionID {
		return nil, nil, problem.Invalid("sessionId", "sessionId is 1 to 256 bytes")
	}
	c.showMu.Lock()
	c.asking = true
	c.showMu.Unlock()
	res := ResumeResult(p)
	c.mu.Lock()
	followed := c.resumed[p.SessionID] != nil
	c.mu.Unlock()
	if followed {
		return res, func() {
			if recs, err := c.pendingIn(map[string]bool{p.SessionID: true}); err == nil {
				c.reissue(recs, resent)
			}
		}, nil
	}
	from, _, err := c.h.svc.EventsAfter(c.ctx, c.caller, "")
	if err != nil {
		return nil, nil, err
	}
	s := newSubscription(c, []string{p.SessionID}, from)
	if s.snapshot, err = c.pendingIn(s.sessions); err != nil {
		s.cancel()
		return nil, nil, err
	}
	s.judged = resent
	if err := c.add(s); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	c.resumed[p.SessionID] = s
	c.mu.Unlock()
	return res, func() { c.spawn(s.run) }, nil
}
