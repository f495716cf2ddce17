package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// maxBody bounds what the adapter reads of one response.
const maxBody = 4 << 20

// statusError is a non-2xx answer: the refusal it carries, as the
// server's problem+json body said it (problem.Parse), and its Retry-After.
type statusError struct {
	problem    *problem.Error
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("%d %s", e.problem.Status, http.StatusText(e.problem.Status))
	if e.problem.Code != "" {
		s += " " + e.problem.Code
	}
	if e.problem.Detail != "" {
		s += ": " + strconv.Quote(e.problem.Detail)
	}
	return s
}

// Unwrap is the refusal: errors.As finds the *problem.Error.
func (e *statusError) Unwrap() error { return e.problem }

// transientStatus: the server may answer differently if asked again.
func (e *statusError) transient() bool {
	st := e.problem.Status
	return st >= 500 || st == http.StatusTooManyRequests || st == http.StatusRequestTimeout
}

// transient reports whether err may go away on retry: transport failures,
// truncated bodies, 5xx, 429 and 408. Refusals and nonsense are final.
func transient(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.transient()
	}
	return !errors.Is(err, ErrBadResponse) && !errors.Is(err, ErrRefused)
}

// retryAfter is the server's Retry-After hint carried by err, or 0.
func retryAfter(err error) time.Duration {
	var se *statusError
	if errors.As(err, &se) {
		return se.retryAfter
	}
	return 0
}

// exchange is one HTTP round trip: the body of a 2xx answer, or an error.
// Every answer's Date header feeds sc.
func (c *Client) exchange(ctx context.Context, sc *serverClock, method, path string, body []byte, hdr http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidCall, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	sent := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sc.observe(sent, resp.Header.Get("Date"))
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, newStatusError(resp, data)
	}
	return data, nil
}

func newStatusError(resp *http.Response, data []byte) *statusError {
	e := &statusError{problem: problem.Parse(resp.StatusCode, data)}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.retryAfter = time.Duration(s) * time.Second
	}
	return e
}

// refused turns a final status error into ErrRefused; others pass.
func refused(err error) error {
	var se *statusError
	if errors.As(err, &se) && !se.transient() {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}

// decodeRecord parses a request record and checks what the adapter relies
// on. A body that is not JSON is treated as truncated (transient); a record
// that makes no sense is ErrBadResponse.
func decodeRecord(data []byte, want domain.RequestID) (*domain.Request, error) {
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading the record: %v", err)
	}
	switch {
	case r.ID == "" || (want != "" && r.ID != want):
		return nil, fmt.Errorf("%w: record %q, want %q", ErrBadResponse, r.ID, want)
	case !domain.ValidStatus(string(r.Status)):
		return nil, fmt.Errorf("%w: unknown status %q", ErrBadResponse, r.Status)
	case r.Status == domain.StatusApproved && (r.Decision == nil || r.Decision.ExpiresAt == nil):
		return nil, fmt.Errorf("%w: an approval without decision.expires_at", ErrBadResponse)
	}
	return &r, nil
}
