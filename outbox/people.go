package outbox

import (
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox/people"
	"github.com/nats-io/nats.go"
)

// peopleMsgs are the messages a stored change c (headers h, record data)
// sends to people's subjects (see people.Msgs); none for a tenant this
// process does not know.
func (o *Worker) peopleMsgs(h nats.Header, data []byte, c events.Change) []*nats.Msg {
	t, ok := o.views.Tenant(c.Tenant)
	if !ok {
		return nil
	}
	return people.Msgs(t, h, data, c, o.superseded, o.listens)
}

// superseded reports whether this process's mirror already holds a later
// revision of r (a change redelivered late): its review is stale.
func (o *Worker) superseded(r *domain.Request) bool {
	m, _, ok := o.views.Requests().Held(kvstate.RequestKey(r.Tenant, r.ID))
	return ok && m.Revision > r.Revision
}
