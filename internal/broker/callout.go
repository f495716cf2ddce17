package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// CalloutAccount is the account the auth callout places tenant users in:
// nats-server's global account, where countersign's own user and
// JetStream live on a cluster configured without accounts (deploy/nats).
const CalloutAccount = server.DEFAULT_GLOBAL_ACCOUNT

// calloutQueue lets several countersign processes share the callout: each
// authorization request is answered by one of them.
const calloutQueue = "countersign-auth"

// callout is countersign as the NATS auth callout service of an external
// cluster: it answers the server's authorization requests with a user JWT,
// signed by the issuer account key, carrying the token's Grant — the same
// permissions the embedded server gives.
type callout struct {
	issuer nkeys.KeyPair
	gate   *gate
	log    *slog.Logger
}

func newCallout(seed string, g *gate, log *slog.Logger) (*callout, error) {
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return nil, fmt.Errorf("broker: auth callout seed: %w", err)
	}
	if pub, _ := kp.PublicKey(); len(pub) == 0 || pub[0] != 'A' {
		return nil, errors.New("broker: auth callout seed is not an account seed (SA…)")
	}
	return &callout{issuer: kp, gate: g, log: log}, nil
}

// subscribe starts answering authorization requests on nc.
func (c *callout) subscribe(nc *nats.Conn) error {
	_, err := nc.QueueSubscribe(server.AuthCalloutSubject, calloutQueue, c.handle)
	if err != nil {
		return fmt.Errorf("broker: auth callout: %w", err)
	}
	return nil
}

// handle answers one request. A request it cannot decode gets no answer:
// the server then refuses the connection when its callout times out.
func (c *callout) handle(m *nats.Msg) {
	resp, err := c.answer(m.Data)
	if err != nil {
		c.log.Warn("auth callout: bad request", "err", err)
		return
	}
	if err := m.Respond([]byte(resp)); err != nil {
		c.log.Warn("auth callout: reply", "err", err)
	}
}

// answer is the signed authorization response to one request JWT: a user
// JWT for a known token, an error for anything else.
func (c *callout) answer(data []byte) (string, error) {
	req, err := jwt.DecodeAuthorizationRequestClaims(string(data))
	if err != nil {
		return "", err
	}
	rc := jwt.NewAuthorizationResponseClaims(req.UserNkey)
	if rc == nil {
		return "", errors.New("request without user nkey")
	}
	rc.Audience = req.Server.ID
	if rc.Jwt, err = c.user(req); err != nil {
		rc.Error = err.Error()
	}
	return rc.Encode(c.issuer)
}

// user is the user JWT for the request's token.
func (c *callout) user(req *jwt.AuthorizationRequestClaims) (string, error) {
	t, tok, ok := c.gate.authenticate(req.ConnectOptions.Token)
	if !ok {
		return "", errors.New("unknown token")
	}
	g := GrantFor(t.ID, tok)
	uc := jwt.NewUserClaims(req.UserNkey)
	uc.Name = userName(t.ID, tok.Principal)
	uc.Audience = CalloutAccount
	if len(g.Publish) == 0 || len(g.Subscribe) == 0 {
		return "", errors.New("empty grant") // an empty allow list allows everything
	}
	// Not micro discovery, not even for admin: on a cluster, countersign's
	// responder shares the nats_url user and its full permissions, and
	// discovery replies go wherever the asker says (on the embedded server,
	// a restricted responder user answers them).
	uc.Pub.Allow.Add(slices.DeleteFunc(slices.Clone(g.Publish), func(s string) bool { return strings.HasPrefix(s, "$SRV.") })...)
	uc.Sub.Allow.Add(g.Subscribe...)
	if g.Responses {
		uc.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	}
	return uc.Encode(c.issuer)
}
