package broker

import (
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats-server/v2/server"
)

// Grant is what one tenant connection may do on the bus (SPEC §9): publish
// to the tenant's API, subscribe below its own reply inbox, an agent its
// own review subject (replying to the offers it receives), a person
// holding approvals:read their own people subject, a service: principal
// holding events:read the tenant's events and holding approvals:read every
// people subject of the tenant (SPEC §9), and a token with
// scope admin micro's discovery ($SRV: its stats span tenants). Everything
// else — another tenant, the work subjects, $KV, $JS, $SYS, _INBOX.>,
// $SRV for any other token — is denied by not being allowed.
type Grant struct {
	Publish   []string
	Subscribe []string
	// Responses: may reply to messages it received (NATS allow_responses).
	Responses bool
}

// ResponseWindow bounds an offer's reply permission: one reply within it.
const ResponseWindow = 2 * time.Minute

// GrantFor returns the permissions of token in tenant.
func GrantFor(tenant domain.TenantID, tok domain.Token) Grant {
	g := Grant{
		Publish:   []string{events.TenantAPIFilter(tenant)},
		Subscribe: []string{events.InboxFilter(tenant, tok.Principal)},
	}
	if tok.Has(domain.ScopeAdmin) {
		g.Publish = append(g.Publish, events.DiscoverySubjects()...)
	}
	switch tok.Principal.Kind {
	case domain.KindAgent:
		g.Subscribe = append(g.Subscribe, events.ReviewSubject(tenant, domain.AgentID(tok.Principal.ID)))
		g.Responses = true
	case domain.KindPerson:
		if tok.Has(domain.ScopeApprovalsRead) {
			g.Subscribe = append(g.Subscribe, events.PeopleSubject(tenant, domain.MemberID(tok.Principal.ID)))
		}
	case domain.KindService:
		if tok.Has(domain.ScopeEventsRead) {
			g.Subscribe = append(g.Subscribe, events.TenantEventsFilter(tenant))
		}
		if tok.Has(domain.ScopeApprovalsRead) { // a gateway acting for the tenant's people
			g.Subscribe = append(g.Subscribe, events.TenantPeopleFilter(tenant))
		}
	}
	return g
}

// serverPermissions is g for the embedded server.
func (g Grant) serverPermissions() *server.Permissions {
	p := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: g.Publish},
		Subscribe: &server.SubjectPermission{Allow: g.Subscribe},
	}
	if g.Responses {
		p.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	}
	return p
}

// userName names a tenant connection in the server's logs and events.
func userName(tenant domain.TenantID, p domain.Ref) string {
	return string(tenant) + "/" + p.Kind + ":" + p.ID
}
