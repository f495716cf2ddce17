package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Input is a change that no state write carries, for a tenant's log: a
// sign-in, say. ID names it once: publishing the same ID again within
// the input stream's dedup window adds nothing.
type Input struct {
	ID      string
	Tenant  domain.TenantID
	Type    string // e.g. events.TypeSignIn
	Actor   Actor
	Subject string
	At      time.Time
	Data    json.RawMessage
}

// Append publishes in to the audit input stream, from which the writer
// adds it to the tenant's log (in the order the input stream holds it).
// It returns once the input is durable. Errors: a bad input, or the
// publish's.
func Append(ctx context.Context, js jetstream.JetStream, in Input) error {
	if in.ID == "" || in.Tenant == "" || in.Type == "" || in.Actor.Kind == "" {
		return fmt.Errorf("audit: an input needs an id, a tenant, a type and an actor")
	}
	if in.At.IsZero() {
		in.At = time.Now()
	}
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("audit: input %s: %w", in.ID, err)
	}
	msg := &nats.Msg{Subject: events.AuditInSubject(in.Tenant), Data: body, Header: nats.Header{}}
	msg.Header.Set(nats.MsgIdHdr, in.ID)
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("audit: input %s: %w", in.ID, err)
	}
	return nil
}

func inChange(m sourceMsg) []change {
	var in Input
	if err := json.Unmarshal(m.data, &in); err != nil || in.Tenant == "" {
		return nil
	}
	return one(in.Tenant, in.Type, in.Actor, in.Subject, in.At, in.Data)
}
