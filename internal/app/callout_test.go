package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// startCalloutNATS runs a nats-server configured like deploy/nats: one
// countersign user, everyone else through auth callout with the issuer
// account key. It returns the server's address and the issuer seed.
func startCalloutNATS(t *testing.T) (addr, seed string) {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		SyncAlways: true, NoLog: true, NoSigs: true,
		Users:       []*server.User{{Username: "countersign", Password: "s3cret"}},
		AuthCallout: &server.AuthCallout{Issuer: pub, AuthUsers: []string{"countersign"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	sb, _ := kp.Seed()
	return s.Addr().String(), string(sb)
}

// On an external cluster countersign is the auth callout service: a tenant
// token connects with its principal's permissions, a bad one is refused.
func TestBusAuthCallout(t *testing.T) {
	addr, seed := startCalloutNATS(t)
	t.Setenv("TEST_CALLOUT_SEED", seed)
	cfg, err := config.Parse([]byte(busTenants))
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Replicas, cfg.AuthCalloutSeedEnv = "nats://countersign:s3cret@"+addr, 1, "TEST_CALLOUT_SEED"
	cfg.DataDir = t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown(context.Background()) })

	url := "nats://" + addr
	if _, err := dialURL(url, "nope", acme, agentA); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("bad token: %v, want an authorization violation", err)
	}
	if _, err := nats.Connect(url, nats.UserInfo("countersign", "guess"), nats.MaxReconnects(0)); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("countersign user with a wrong password: %v", err)
	}
	internal := a.Broker.Conn
	if _, err := internal.Subscribe("countersign.acme.api.ping", func(m *nats.Msg) { _ = m.Respond([]byte("pong")) }); err != nil {
		t.Fatal(err)
	}
	_ = internal.Flush()
	c := mustDialURL(t, url, "acme-a", acme, agentA)
	if _, err := c.nc.Request("countersign.acme.api.ping", nil, 5*time.Second); err != nil {
		t.Fatalf("api request through the callout user: %v", err)
	}
	if _, err := c.nc.QueueSubscribe(events.ReviewSubject(acme, "agt_a"), "runtime", func(m *nats.Msg) { _ = m.Respond(nil) }); err != nil {
		t.Fatal(err)
	}
	_ = c.nc.Flush()
	if _, err := internal.Request(events.ReviewSubject(acme, "agt_a"), []byte("offer"), 5*time.Second); err != nil {
		t.Fatalf("offer not taken through the callout user: %v", err)
	}
	c.refusedSub(t, "$KV.>")
	c.refusedPub(t, "$JS.API.STREAM.INFO.KV_requests")
	c.refusedSub(t, "countersign.globex.api.>")
	c.refusedSub(t, events.InboxFilter(acme, agentB))
	c.refusedSub(t, events.TenantEventsFilter(acme))
	// No discovery, even for admin: its replies would come from the
	// full-permission user.
	c.refusedPub(t, "$SRV.PING")
	mustDialURL(t, url, "acme-admin", acme, admin).refusedPub(t, "$SRV.PING")
	secondReplyRefused(t, internal, mustDialURL(t, url, "acme-b", acme, agentB), events.ReviewSubject(acme, "agt_b"))
	// People's subjects: a person's own only, never another person's or
	// tenant's (SPEC §9).
	p := mustDialURL(t, url, "acme-person", acme, personU1)
	if _, err := p.nc.SubscribeSync(events.PeopleSubject(acme, "u-1")); err != nil {
		t.Fatal(err)
	}
	p.clean(t)
	p.refusedSub(t, events.PeopleSubject(acme, "u-2"))
	p.refusedSub(t, events.PeopleSubject(globex, "u-1"))
	p.refusedSub(t, events.TenantPeopleFilter(acme))
	svc := mustDialURL(t, url, "acme-audit", acme, audit)
	if _, err := svc.nc.SubscribeSync(events.TenantEventsFilter(acme)); err != nil {
		t.Fatal(err)
	}
	svc.clean(t)
}
