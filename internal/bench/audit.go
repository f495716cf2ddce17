package bench

import (
	"bytes"
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
	// One consumer for every entry (an ordered consumer's Next makes a
	// consumer of its own each call).
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	var lags []time.Duration
	for {
		m, err := it.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil && len(lags) == 0 {
			return nil // no entries: the run wrote nothing
		}
		if err != nil {
			return fmt.Errorf("bench: audit entries: %w", err)
		}
		md, _ := m.Metadata()
		data, err := audit.Lines(m)
		if err != nil {
			return fmt.Errorf("bench: audit entries: %w", err)
		}
		for line := range bytes.SplitSeq(data, []byte{'\n'}) { // a message packs several entries
			var e struct {
				At time.Time `json:"at"`
			}
			if json.Unmarshal(line, &e) == nil {
				lags = append(lags, md.Timestamp.Sub(e.At))
			}
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
