package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// Session is one command's server and output: what it prints goes to Out,
// as a table or, with JSON, as the server's JSON. Its methods return
// *problem.Error when the server refused, or an error saying why the
// server could not be asked or understood.
type Session struct {
	Client *Client
	Out    io.Writer
	JSON   bool
}

// Pending lists GET /v1/requests?status=pending, every page.
func (s Session) Pending(ctx context.Context) error {
	q := url.Values{"status": {string(domain.StatusPending)}}
	var p people
	if !s.JSON {
		p = s.Client.people(ctx)
	}
	return list(ctx, s, "/v1/requests", q, func(w io.Writer, recs []domain.Request) {
		requestTable(w, recs, time.Now(), p)
	})
}

func requestTable(w io.Writer, recs []domain.Request, now time.Time, p people) {
	if len(recs) == 0 {
		fmt.Fprintln(w, "No requests are waiting for you.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCAPABILITY\tREASON\tAPPROVER\tDEADLINE")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (%s)\n", cell(string(r.ID)), cell(string(r.Agent)),
			capability(r.Capability), quote(r.Reason, 60), p.ref(r.Approver),
			stamp(r.DeadlineAt), until(r.DeadlineAt, now))
	}
	tw.Flush()
}

// Show prints one request.
func (s Session) Show(ctx context.Context, id string) error {
	var rec domain.Request
	raw, err := s.Client.get(ctx, apiPath("/v1/requests/", id), &rec)
	if err != nil {
		return err
	}
	if s.JSON {
		writeRaw(s.Out, raw)
		return nil
	}
	s.Client.people(ctx).writeRecord(s.Out, &rec, time.Now())
	return nil
}

// AnswerInput is an answer: the body of POST /v1/requests/{id} (SPEC §5)
// but the expected revision, which Answer reads.
type AnswerInput struct {
	Decision string `json:"decision"` // allow or deny
	Scope    string `json:"scope,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Rule     string `json:"rule,omitempty"`
	// Arguments approves with edits: the call as it should run instead.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// answerBody is the body of POST /v1/requests/{id}.
type answerBody struct {
	Expected uint64 `json:"expected"`
	AnswerInput
}

// Answer reads the request's current revision and answers with it as
// expected, so an answer never lands on a request that changed since. A
// refused answer of 409 also says, on the lines after the refusal, where
// the request stands now.
func (s Session) Answer(ctx context.Context, id string, in AnswerInput) error {
	path := apiPath("/v1/requests/", id)
	var before domain.Request
	if _, err := s.Client.get(ctx, path, &before); err != nil {
		return err
	}
	raw, err := s.Client.do(ctx, http.MethodPost, path, answerBody{Expected: before.Revision, AnswerInput: in})
	var p *problem.Error
	if errors.As(err, &p) && p.Status == http.StatusConflict {
		return hinted{err, conflictHint(ctx, s.Client, path, &before)}
	}
	if err != nil {
		return err
	}
	return s.answered(ctx, &before, raw)
}

func (s Session) answered(ctx context.Context, before *domain.Request, raw []byte) error {
	if s.JSON {
		writeRaw(s.Out, raw)
		return nil
	}
	var rec domain.Request
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("the server's answer is not a request record: %w", err)
	}
	fmt.Fprintf(s.Out, "%s: %s\n", cell(string(rec.ID)), s.Client.people(ctx).outcome(before, &rec))
	return nil
}

// outcome says what an answer did, from the record before and after it:
// a decision; a shell request's stage allowed and the next one waiting
// (SPEC §8: a shell call is answered stage by stage); a quorum's allow
// counted; or an endorsement passed up.
func (p people) outcome(before, after *domain.Request) string {
	if after.Status != domain.StatusPending {
		return p.decisionLine(after)
	}
	if n := len(after.Stages); n > 0 && after.CurrentStage > before.CurrentStage && after.CurrentStage < n {
		done := fmt.Sprintf("stage %d of %d allowed", before.CurrentStage+1, n)
		if after.CurrentStage > before.CurrentStage+1 {
			done = fmt.Sprintf("stages %d–%d of %d allowed", before.CurrentStage+1, after.CurrentStage, n)
		}
		next := fmt.Sprintf("stage %d waits for %s", after.CurrentStage+1, p.waitsFor(after.Approver))
		if p.isYou(after.Approver) {
			next += ": answer again for it (countersign show " + cell(string(after.ID)) + ")"
		}
		return done + "; " + next
	}
	if len(after.Approvals) > len(before.Approvals) {
		return fmt.Sprintf("your allow is counted, %d of %d; it waits for %s", len(after.Approvals), after.Quorum(), p.waitsFor(after.Approver))
	}
	return "passed up; it now waits for " + p.waitsFor(after.Approver)
}

// hinted is a refusal and, on the next line, what to make of it.
type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return h.err.Error() + "\n" + h.hint }
func (h hinted) Unwrap() error { return h.err }

func conflictHint(ctx context.Context, c *Client, path string, before *domain.Request) string {
	var now domain.Request
	if _, err := c.get(ctx, path, &now); err != nil {
		return "The request changed since it was read, or it is not yours to answer."
	}
	switch {
	case now.Status.Terminal():
		return "The request is already " + c.people(ctx).statusLine(&now, time.Now()) + "; it can no longer be answered."
	case now.Revision != before.Revision:
		return fmt.Sprintf("The request changed while you answered (revision %d, now %d); it waits for %s. Run `countersign show %s` and answer again if it is yours.",
			before.Revision, now.Revision, c.people(ctx).waitsFor(now.Approver), cell(string(now.ID)))
	case !now.DeadlineAt.IsZero() && !time.Now().Before(now.DeadlineAt):
		return "Its deadline has passed: no decision was made in time, and it can no longer be answered."
	}
	return "It is not yours to answer: it waits for " + c.people(ctx).ref(now.Approver) + "."
}
