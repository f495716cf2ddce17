package broker

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"sync/atomic"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats-server/v2/server"
)

// Authenticator maps a client's token to its tenant and token entry, the
// same lookup the HTTP API makes (views.Views satisfies it). It is
// consulted on every connect, so a token registered or removed since start
// counts at once.
type Authenticator interface {
	Authenticate(token string) (*domain.Tenant, domain.Token, bool)
}

// InternalUser is the NATS user of countersign's own connections. It has
// every permission; its password is random per start of the embedded
// server and never leaves the process.
const InternalUser = "countersign"

// ResponderUser is the NATS user of the connection that answers the bus
// API and micro discovery. Its replies go to subjects that tenants name, so
// it may publish only into tenant inboxes (_INBOX.<tenant>.<kind>.<id>.…,
// five tokens or more: never an internal _INBOX.<nuid>.<n>, a $KV, $JS or
// review subject), and subscribe only to the API subjects and, in the
// queue group events.DiscoveryQueue, to the discovery subjects.
const ResponderUser = "countersign-responder"

// responderPermissions are ResponderUser's.
var responderPermissions = &server.Permissions{
	Publish:   &server.SubjectPermission{Allow: []string{"_INBOX.*.*.*.>"}},
	Subscribe: &server.SubjectPermission{Allow: []string{events.SubjectRoot + ".*.api.>", "$SRV.> " + events.DiscoveryQueue}},
}

// gate holds the token lookup for the embedded server's client check
// (server.Authentication) and the auth callout, and the internal user's
// password. Until an Authenticator is set every tenant token is refused.
type gate struct {
	password string
	auth     atomic.Pointer[Authenticator]
}

var _ server.Authentication = (*gate)(nil)

func newGate(a Authenticator) *gate {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	g := &gate{password: base64.RawURLEncoding.EncodeToString(b)}
	if a != nil {
		g.auth.Store(&a)
	}
	return g
}

// Check admits the internal user, or a tenant token with its principal's
// permissions; anything else (no credentials, an unknown token, nkeys,
// JWTs) is refused at connect.
func (g *gate) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if o.Username != "" || o.Password != "" {
		if subtle.ConstantTimeCompare([]byte(o.Password), []byte(g.password)) != 1 {
			return false
		}
		switch o.Username {
		case InternalUser:
			c.RegisterUser(&server.User{Username: InternalUser})
		case ResponderUser:
			c.RegisterUser(&server.User{Username: ResponderUser, Permissions: responderPermissions})
		default:
			return false
		}
		return true
	}
	t, tok, ok := g.authenticate(o.Token)
	if !ok {
		return false
	}
	c.RegisterUser(&server.User{Username: userName(t.ID, tok.Principal), Permissions: GrantFor(t.ID, tok).serverPermissions()})
	return true
}

func (g *gate) authenticate(token string) (*domain.Tenant, domain.Token, bool) {
	a := g.auth.Load()
	if a == nil || token == "" {
		return nil, domain.Token{}, false
	}
	return (*a).Authenticate(token)
}

// Disconnect closes the embedded server's tenant connections whose
// principal drop names (say, an agent retired since it connected): a
// connection keeps the permissions it got at connect, so a token refused
// from now on must not live on in one made before. It returns how many it
// closed; on an external cluster it closes none.
func (b *Broker) Disconnect(drop func(tenant domain.TenantID, p domain.Ref) bool) int {
	if b.Server == nil {
		return 0
	}
	var cids []uint64 // all pages first: closing shifts the offsets
	for offset := 0; ; offset += connzPage {
		cz, err := b.Server.Connz(&server.ConnzOptions{Username: true, Offset: offset, Limit: connzPage})
		if err != nil || len(cz.Conns) == 0 {
			break
		}
		for _, c := range cz.Conns {
			if t, p, ok := parseUserName(c.AuthorizedUser); ok && drop(t, p) {
				cids = append(cids, c.Cid)
			}
		}
	}
	n := 0
	for _, cid := range cids {
		if b.Server.DisconnectClientByID(cid) == nil {
			n++
		}
	}
	return n
}

const connzPage = 1024

// parseUserName inverts userName.
func parseUserName(s string) (domain.TenantID, domain.Ref, bool) {
	t, rest, ok := strings.Cut(s, "/")
	if !ok {
		return "", domain.Ref{}, false
	}
	p, ok := domain.ParsePrincipal(rest)
	return domain.TenantID(t), p, ok
}
