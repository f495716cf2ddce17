package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
)

// measureAuditLag waits until the audit writer has projected every
// request write of the run, then sets res's lag figures: each entry's
// stored time less its event's time.
func measureAuditLag(ctx context.Context, js jetstream.JetStream, res *Result) error {
	res.Audit = "on"
	if err := waitAudit(ctx, js); err != nil {
		return err
	}
	cons, err := js.OrderedConsumer(ctx, audit.Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.AuditEntryFilter}})
	if err != nil {
		return err
	}
	var lags []time.Duration
	for {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil && len(lags) == 0 {
			return nil // no entries: the run wrote nothing
		}
		if err != nil {
			return fmt.Errorf("bench: audit entries: %w", err)
		}
		md, _ := m.Metadata()
		at, err := time.Parse(time.RFC3339Nano, m.Headers().Get("Audit-At"))
		if err == nil {
			lags = append(lags, md.Timestamp.Sub(at))
		}
		if md.NumPending == 0 {
			break
		}
	}
	slices.Sort(lags)
	res.AuditEntries = len(lags)
	ms := func(q float64) float64 { return float64(lags[int(q*float64(len(lags)-1))]) / 1e6 }
	res.AuditLagP50ms, res.AuditLagP99ms = ms(0.50), ms(0.99)
	return nil
}

// waitAudit waits until the audit cursor has passed the requests
// stream's last write (at most a minute).
func waitAudit(ctx context.Context, js jetstream.JetStream) error {
	reqs := kvstate.StreamOf(kvstate.BucketRequests)
	st, err := js.Stream(ctx, reqs)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	as, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m, err := as.GetLastMsgForSubject(ctx, events.AuditCursorSubject)
		if err != nil {
			continue
		}
		var cur map[string]uint64
		if json.Unmarshal(m.Data, &cur) == nil && cur[reqs] >= info.State.LastSeq {
			return nil
		}
	}
	return fmt.Errorf("bench: the audit log did not catch up within a minute")
}
