package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
)

// Submits racing from one agent never leave it more than max_pending
// pending requests in one process: a place is held from the check until
// the request is in the mirror.
func TestMaxPendingHoldsUnderRacingSubmits(t *testing.T) {
	f := newFixture(t)
	f.agent.Tenant.MaxPending, f.agent.Tenant.SubmitRate, f.agent.Tenant.SubmitBurst = 3, 1000, 1000
	var accepted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := f.svc.Submit(context.Background(), f.agent, approvals.SubmitInput{Tool: "deploy",
				Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}, "", "")
			switch {
			case err == nil:
				accepted.Add(1)
			case errors.Is(err, approvals.ErrRateLimited):
				refused.Add(1)
			default:
				t.Errorf("submit %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	pending := f.svc.Views().PendingOf("acme", domain.AgentID(f.agent.Principal.ID))
	if a := accepted.Load(); a < 1 || a > 3 || int(a) != pending || a+refused.Load() != 24 {
		t.Fatalf("accepted %d, refused %d, pending %d; want 1 to 3 accepted, all pending, the rest refused", a, refused.Load(), pending)
	}
}
