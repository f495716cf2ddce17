package adapter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/problem"
)

func TestDoReadRuleRunsAtOnce(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	var runs counter
	out, err := newClient(t, srv.URL, tokMain).Do(context.Background(), call("read_invoice"), runs.run)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s with %d runs (%s), want ran once", out.Kind, runs.count(), out)
	}
	if got, want := out.Decision().By.Kind, domain.KindRead; got != want {
		t.Errorf("decided by %q, want %q", got, want)
	}
	if rec := srv.API(t).Get(tokMain, out.RequestID()); rec.ClaimedAt == nil {
		t.Errorf("server record not claimed after the run: %+v", rec)
	}
}

func TestDoEndorsedThenApprovedByPerson(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	var runs counter
	ch := doAsync(context.Background(), newClient(t, srv.URL, tokProgrammer), call("issue_refund"), &runs)
	r := a.AwaitPending(tokMain, "issue_refund")
	a.Answer(tokMain, r.ID, "allow", "Looks right to me.")
	r = a.AwaitPending(tokPerson, "issue_refund")
	a.Answer(tokPerson, r.ID, "allow", "Confirmed duplicate.")
	res := wait(t, ch)
	if res.out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s with %d runs, want ran once", res.out, runs.count())
	}
	if got, want := res.out.Decision().By, (domain.Ref{Kind: domain.KindPerson, ID: "u-1"}); got != want {
		t.Errorf("decided by %+v, want %+v", got, want)
	}
}

func TestDoDeniedByPersonDoesNotRun(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	var runs counter
	ch := doAsync(context.Background(), newClient(t, srv.URL, tokMain), call("issue_refund"), &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	a.Answer(tokPerson, r.ID, "deny", "Not today.")
	res := wait(t, ch)
	if res.out.Kind != adapter.Denied || runs.count() != 0 {
		t.Fatalf("got %s with %d runs, want denied, not run", res.out, runs.count())
	}
	if got, want := res.out.String(), `denied by person u-1 with the note "Not today."`; !strings.Contains(got, want) {
		t.Errorf("wording %q, want it to contain %q", got, want)
	}
}

func TestDoLostSubmitResponseRecoversSameRequest(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	proxy := newFaultProxy(t, srv.URL)
	proxy.inject(fault{dropResponse: true})
	var runs counter
	ch := doAsync(context.Background(), newClient(t, proxy.URL(), tokMain), call("issue_refund"), &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	a.Answer(tokPerson, r.ID, "allow", "")
	res := wait(t, ch)
	if res.out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s with %d runs, want ran once", res.out, runs.count())
	}
	if got := proxy.dropped(); got != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", got)
	}
	if got := res.out.RequestID(); got != r.ID {
		t.Errorf("adapter used request %s, want the one created by the lost submit, %s", got, r.ID)
	}
	if n := len(a.Pending(tokPerson)); n != 0 {
		t.Errorf("%d other requests still pending; want the retry to create none", n)
	}
}

func TestDoSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	var runs counter
	c := newClient(t, srv.URL, tokMain, adapter.WithPollWait(time.Second))
	ch := doAsync(context.Background(), c, call("issue_refund"), &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	srv.Restart(t)
	a.Answer(tokPerson, r.ID, "allow", "After the restart.")
	res := wait(t, ch)
	if res.out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s with %d runs, want ran once", res.out, runs.count())
	}
}

// clockTransport moves the adapter's clock by jump once the submit's answer
// has arrived: time passing between the decision and the start of the call.
type clockTransport struct {
	skew *atomic.Int64
	jump time.Duration
}

func (ct clockTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && req.URL.Path == "/v1/requests" {
		ct.skew.Add(int64(ct.jump))
	}
	return resp, err
}

func TestDoApprovalExpiryByServerCorrectedClock(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	tests := []struct {
		name       string
		skew, jump time.Duration // local clock minus real time, before and after the submit
		want       adapter.Kind
	}{
		{"in sync", 0, 0, adapter.Ran},
		{"local clock 10m fast", 10 * time.Minute, 0, adapter.Ran},
		{"local clock 10m slow", -10 * time.Minute, 0, adapter.Ran},
		{"10m pass before the call starts", 0, 10 * time.Minute, adapter.ApprovalExpired},
		// No grace: 30s either side of expires_at (the default approval_ttl
		// after the decision). Past it the server would still take the
		// claim (its clock did not jump): only the adapter's check refuses.
		{"30s before expires_at", 0, config.DefaultApprovalTTL - 30*time.Second, adapter.Ran},
		{"30s past expires_at", 0, config.DefaultApprovalTTL + 30*time.Second, adapter.ApprovalExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skew atomic.Int64
			skew.Store(int64(tt.skew))
			clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			hc := &http.Client{Transport: clockTransport{&skew, tt.jump}}
			c := newClient(t, srv.URL, tokMain, adapter.WithClock(clock), adapter.WithHTTPClient(hc))
			var runs counter
			out, _ := c.Do(context.Background(), call("read_invoice"), runs.run)
			if out.Kind != tt.want {
				t.Fatalf("got %s, want %s", out, tt.want)
			}
			if tt.want == adapter.ApprovalExpired {
				if runs.count() != 0 || !strings.Contains(out.String(), "expired") {
					t.Errorf("ran %d times, wording %q; want not run, reported expired", runs.count(), out)
				}
				if rec := srv.API(t).Get(tokMain, out.RequestID()); rec.ClaimedAt != nil {
					t.Errorf("expired approval was claimed at %v", rec.ClaimedAt)
				}
			}
		})
	}
}

// tamperTransport changes the arguments of a submit on the way to the
// server: the server approves a call other than the one about to run.
type tamperTransport struct{}

func (tamperTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.URL.Path == "/v1/requests" {
		body, _ := io.ReadAll(req.Body)
		body = bytes.Replace(body, []byte("4900"), []byte("9900"), 1)
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestDoDigestMismatchDoesNotRun(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	hc := &http.Client{Transport: tamperTransport{}}
	var runs counter
	out, _ := newClient(t, srv.URL, tokMain, adapter.WithHTTPClient(hc)).Do(context.Background(), call("read_invoice"), runs.run)
	if out.Kind != adapter.NotObtained || !errors.Is(out.Err, adapter.ErrDigestMismatch) || runs.count() != 0 {
		t.Fatalf("got %s (%v) with %d runs, want not obtained with ErrDigestMismatch, not run", out.Kind, out.Err, runs.count())
	}
	if rec := srv.API(t).Get(tokMain, out.RequestID()); rec.ClaimedAt != nil {
		t.Errorf("mismatched approval was claimed at %v", rec.ClaimedAt)
	}
}

func TestDoWaitLimitShortensTimeoutAndCancels(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	proxy := newFaultProxy(t, srv.URL)
	// A slow network eats the margin: the request reaches the server 1.5s
	// into a 3s wait limit.
	proxy.inject(fault{delayRequest: 1500 * time.Millisecond})
	c := newClient(t, proxy.URL(), tokMain, adapter.WithWaitLimit(3*time.Second), adapter.WithMargin(time.Second))
	cl := call("issue_refund")
	cl.Timeout = time.Hour
	var runs counter
	start := time.Now()
	out, _ := c.Do(context.Background(), cl, runs.run)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Do took %v, past the 3s wait limit", took)
	}
	if out.Kind != adapter.NotObtained || !errors.Is(out.Err, adapter.ErrWaitLimit) || runs.count() != 0 {
		t.Fatalf("got %s (%v), %d runs; want not obtained by the wait limit, not run", out.Kind, out.Err, runs.count())
	}
	if s := out.String(); !strings.Contains(s, "could not be obtained") || strings.Contains(s, "denied by") {
		t.Errorf("wording %q, want 'could not be obtained' and no denial", s)
	}
	rec := srv.API(t).Get(tokMain, out.RequestID())
	if d, err := time.ParseDuration(rec.Timeout); err != nil || d > 3*time.Second {
		t.Errorf("requested timeout %q, want it shortened to fit 3s", rec.Timeout)
	}
	if rec.Status != domain.StatusCancelled {
		t.Errorf("server status %q, want cancelled", rec.Status)
	}
}

func TestDoNoDecisionInTimeIsExpiredNotDenied(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cl := call("issue_refund")
	cl.Timeout = 2 * time.Second
	var runs counter
	out, _ := newClient(t, srv.URL, tokMain, adapter.WithWaitLimit(15*time.Second)).Do(context.Background(), cl, runs.run)
	if out.Kind != adapter.Expired || runs.count() != 0 {
		t.Fatalf("got %s, %d runs; want expired, not run", out, runs.count())
	}
	s := out.String()
	if !strings.Contains(s, "no decision was made in time") || strings.Contains(s, "denied by") {
		t.Errorf("wording %q, want 'no decision was made in time' and no denial", s)
	}
}

func TestDoCancelledContextCancelsRequest(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	ctx, cancel := context.WithCancel(context.Background())
	var runs counter
	// The cancel is best effort within its timeout: give it room, so a
	// loaded machine does not decide the test.
	ch := doAsync(ctx, newClient(t, srv.URL, tokMain, adapter.WithCancelTimeout(time.Minute)), call("issue_refund"), &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	cancel()
	res := wait(t, ch)
	if res.out.Kind != adapter.Cancelled || !errors.Is(res.out.Err, adapter.ErrAbandoned) || runs.count() != 0 {
		t.Fatalf("got %s (%v), %d runs; want cancelled as abandoned, not run", res.out.Kind, res.out.Err, runs.count())
	}
	if got := a.Get(tokPerson, r.ID).Status; got != domain.StatusCancelled {
		t.Errorf("server status %q, want cancelled", got)
	}
}

func TestDoTwoAdaptersRacingToClaimRunOnce(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	cl := call("issue_refund")
	cl.IdempotencyKey = "3f1c9a52-2d1e-4c7e-9d4b-7a0e6f1b2c3d" // both recover one request
	var runs counter
	ch1 := doAsync(context.Background(), newClient(t, srv.URL, tokMain), cl, &runs)
	ch2 := doAsync(context.Background(), newClient(t, srv.URL, tokMain), cl, &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	a.Answer(tokPerson, r.ID, "allow", "")
	r1, r2 := wait(t, ch1), wait(t, ch2)
	if runs.count() != 1 {
		t.Fatalf("ran %d times, want once (outcomes: %s / %s)", runs.count(), r1.out, r2.out)
	}
	lost := r1.out
	if lost.Kind == adapter.Ran {
		lost = r2.out
	}
	if lost.Kind != adapter.NotObtained || !errors.Is(lost.Err, adapter.ErrAlreadyClaimed) {
		t.Errorf("loser got %s (%v), want not obtained with ErrAlreadyClaimed", lost.Kind, lost.Err)
	}
}

func TestDoFailsClosed(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	down := newFaultProxy(t, srv.URL)
	down.close() // nothing listens there any more
	tests := []struct {
		name, url, token string
		want             error
		refusal          *problem.Error // the server's, as the adapter decoded it
	}{
		{"server unreachable", down.URL(), tokMain, adapter.ErrUnreachable, nil},
		{"unknown token", srv.URL, "no-such-token", adapter.ErrRefused,
			&problem.Error{Status: 401, Code: "Unauthenticated", Detail: "a valid bearer token is required"}},
		{"person token cannot submit", srv.URL, tokPerson, adapter.ErrRefused,
			&problem.Error{Status: 403, Code: "Forbidden", Detail: "this token lacks the requests:write scope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.url, tt.token, adapter.WithUnreachableLimit(time.Second))
			var runs counter
			out, _ := c.Do(context.Background(), call("read_invoice"), runs.run)
			if out.Kind != adapter.NotObtained || !errors.Is(out.Err, tt.want) || runs.count() != 0 {
				t.Fatalf("got %s (%v), %d runs; want not obtained with %v", out.Kind, out.Err, runs.count(), tt.want)
			}
			var p *problem.Error
			if tt.refusal != nil && (!errors.As(out.Err, &p) || *p != *tt.refusal) {
				t.Errorf("refusal %+v, want %+v", p, tt.refusal)
			}
			if s := out.String(); !strings.Contains(s, "nobody denied") {
				t.Errorf("wording %q, want it to say nobody denied the call", s)
			}
		})
	}
}
