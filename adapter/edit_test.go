package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// edits keeps what Call.TakeEdits was given.
type edits struct {
	mu   sync.Mutex
	args []json.RawMessage
}

func (e *edits) take(a json.RawMessage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.args = append(e.args, a)
}

func (e *edits) got() []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.args
}

// A refund a person approved with a smaller amount runs with that amount:
// Do hands the edited arguments over before run, and claims the edited
// call's digest.
func TestDoApprovedWithEditsRunsTheEditedCall(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	var runs counter
	var e edits
	c := call("issue_refund")
	c.TakeEdits = e.take
	ch := doAsync(context.Background(), newClient(t, srv.URL, tokMain), c, &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	edited := a.Edit(tokPerson, r.ID, map[string]any{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"})
	res := wait(t, ch)
	if res.out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s with %d runs, want ran once", res.out, runs.count())
	}
	if got := e.got(); len(got) != 1 || string(got[0]) != `{"amount":1000,"currency":"GBP","payment_id":"payment_123"}` {
		t.Errorf("TakeEdits got %q, want the edited arguments once", got)
	}
	rec := a.Get(tokMain, r.ID)
	if rec.ClaimedAt == nil || rec.CallDigest != edited.CallDigest || rec.Edited == nil {
		t.Errorf("server record after the run: claimed %v digest %s edited %+v; want claimed with the edited digest", rec.ClaimedAt, rec.CallDigest, rec.Edited)
	}
	if s := res.out.String(); !strings.Contains(s, "approved with edits by person u-1") {
		t.Errorf("Outcome.String() = %q, want it to say the call was approved with edits", s)
	}
}

// A harness that cannot take edited input does not run an approval with
// edits, and is told why.
func TestDoApprovedWithEditsWithoutTakeEditsDoesNotRun(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	var runs counter
	ch := doAsync(context.Background(), newClient(t, srv.URL, tokMain), call("issue_refund"), &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")
	a.Edit(tokPerson, r.ID, map[string]any{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"})
	res := wait(t, ch)
	if res.out.Kind != adapter.NotObtained || !errors.Is(res.out.Err, adapter.ErrEdited) || runs.count() != 0 {
		t.Fatalf("got %s (%v) with %d runs, want not obtained with ErrEdited, no run", res.out.Kind, res.out.Err, runs.count())
	}
	if s := res.out.String(); !strings.Contains(s, "approved only with edits this harness cannot apply") {
		t.Errorf("Outcome.String() = %q, want it to say the call was approved only with edits", s)
	}
	if rec := a.Get(tokMain, r.ID); rec.ClaimedAt != nil {
		t.Errorf("an approval with edits was claimed by a harness that cannot apply them")
	}
}
