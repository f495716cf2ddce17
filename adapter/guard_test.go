package adapter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

type refund struct {
	PaymentID string `json:"payment_id"`
	Amount    int    `json:"amount"`
}

func TestGuard(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	c := newClient(t, srv.URL, tokMain)
	ran := 0
	tool := func(_ context.Context, in refund) (string, error) {
		ran++
		return "refunded " + in.PaymentID, nil
	}

	read := adapter.Guard(c, adapter.Call{Tool: "read_payment"}, tool)
	got, err := read(context.Background(), refund{"payment_1", 100})
	if err != nil || got != "refunded payment_1" || ran != 1 {
		t.Fatalf("read tool: got %q, %v, %d runs; want the result, nil, 1 run", got, err, ran)
	}

	issue := adapter.Guard(c, adapter.Call{Tool: "issue_refund", Reason: "duplicate"}, tool)
	done := make(chan error, 1)
	go func() {
		_, err := issue(context.Background(), refund{"payment_2", 4900})
		done <- err
	}()
	r := a.AwaitPending(tokPerson, "issue_refund")
	a.Answer(tokPerson, r.ID, "deny", "No.")
	err = <-done
	var nr *adapter.NotRunError
	if !errors.As(err, &nr) || !errors.Is(err, adapter.ErrNotRun) || nr.Outcome.Kind != adapter.Denied {
		t.Fatalf("denied tool: got %v, want a *NotRunError for a denial", err)
	}
	if ran != 1 {
		t.Errorf("tool ran %d times, want 1 (the denied call must not run)", ran)
	}
}
