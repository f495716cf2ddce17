package adapter_test

import (
	"context"
	"testing"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestCancelTurnEndsTheWaitingCall: the harness interrupts a turn while a
// call of it waits for the person; CancelTurn cancels that request, the
// waiting Do reports the call as cancelled and never runs it, and nothing
// of the turn is left pending.
func TestCancelTurnEndsTheWaitingCall(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	c := newClient(t, srv.URL, tokMain)
	var runs counter
	inTurn := call("issue_refund")
	inTurn.Turn = "turn-7"
	ch := doAsync(context.Background(), c, inTurn, &runs)
	r := a.AwaitPending(tokPerson, "issue_refund")

	ids, err := c.CancelTurn(context.Background(), "turn-7")
	if err != nil || len(ids) != 1 || ids[0] != r.ID {
		t.Fatalf("CancelTurn = %v, %v; want [%s]", ids, err, r.ID)
	}
	res := wait(t, ch)
	if res.out.Kind != adapter.Cancelled || runs.count() != 0 {
		t.Fatalf("got %s with %d runs, want cancelled, not run", res.out, runs.count())
	}
	if n := len(a.Pending(tokPerson)); n != 0 {
		t.Errorf("%d requests still pending after the turn was interrupted", n)
	}
	if ids, err := c.CancelTurn(context.Background(), "turn-7"); err != nil || len(ids) != 0 {
		t.Errorf("a second CancelTurn = %v, %v; want [] and no error", ids, err)
	}
}
