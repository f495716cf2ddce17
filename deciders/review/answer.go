package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// answerBody is the api.answer request body: the HTTP answer body plus id.
type answerBody struct {
	ID       domain.RequestID `json:"id"`
	Expected uint64           `json:"expected"`
	Decision string           `json:"decision"`
	Scope    string           `json:"scope,omitempty"`
	Reason   string           `json:"reason,omitempty"`
}

// Bounds of the backoff between attempts to deliver one answer.
const (
	retryMin = 200 * time.Millisecond
	retryMax = 5 * time.Second
)

// BusAnswer returns an Answer function that answers on
// countersign.<tenant>.api.answer with token, each attempt bounded by wait,
// retrying a transient failure until ctx ends. A 409 is ErrConflict; any
// other refusal wraps ErrAnswer. A token that does not authenticate gets no
// reply at all (SPEC §9: no inbox is its own), so such an answer is retried
// until ctx ends.
func BusAnswer(nc *nats.Conn, tenant domain.TenantID, token string, wait time.Duration) func(context.Context, Bundle, Answer) error {
	return func(ctx context.Context, b Bundle, a Answer) error {
		body, err := json.Marshal(answerBody{ID: b.Request.ID, Expected: b.Request.Revision,
			Decision: a.Decision, Scope: a.Scope, Reason: a.Reason})
		if err != nil {
			return err
		}
		msg := &nats.Msg{Subject: events.APISubject(tenant, events.OpAnswer), Data: body, Header: nats.Header{}}
		msg.Header.Set("Authorization", "Bearer "+token)
		return retry(ctx, func() (bool, error) { return sendAnswer(ctx, nc, msg, wait) })
	}
}

// retry calls try until it succeeds, fails for good, or ctx ends.
func retry(ctx context.Context, try func() (transient bool, err error)) error {
	delay := retryMin
	for {
		transient, err := try()
		if err == nil || !transient {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("review: answer not delivered: %w (last: %v)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, retryMax)
	}
}

// sendAnswer makes one attempt and classifies its outcome.
func sendAnswer(ctx context.Context, nc *nats.Conn, msg *nats.Msg, wait time.Duration) (bool, error) {
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	resp, err := nc.RequestMsgWithContext(actx, msg)
	if err != nil {
		return !errors.Is(err, nats.ErrConnectionClosed), fmt.Errorf("review: answer: %w", err)
	}
	code := resp.Header.Get("Nats-Service-Error-Code")
	if code == "" {
		return false, nil
	}
	status, _ := strconv.Atoi(code)
	problem := fmt.Sprintf("%s %s: %s", code, resp.Header.Get("Nats-Service-Error"), resp.Data)
	switch {
	case status == 409:
		return false, fmt.Errorf("%w: %s", ErrConflict, problem)
	case status == 429 || status >= 500:
		return true, fmt.Errorf("review: answer: %s", problem)
	}
	return false, fmt.Errorf("%w: %s", ErrAnswer, problem)
}
