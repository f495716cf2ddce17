package broker

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

func startListening(t *testing.T, listen string) *Broker {
	t.Helper()
	b, err := Start(context.Background(), Config{DataDir: t.TempDir(), Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// Before the views are ready (no Authenticator yet) every tenant token is
// refused; countersign's own in-process connections authenticate as the
// internal user (in-process connections run the same Check: without
// credentials one is refused, but the refusal takes about 10 s, too
// slow for this test).
func TestEmbeddedRefusesTokensUntilAuthenticatorSet(t *testing.T) {
	b := startListening(t, "127.0.0.1:0")
	if b.ClientURL() == "" {
		t.Fatal("no client URL with Listen 127.0.0.1:0")
	}
	if _, err := nats.Connect(b.ClientURL(), nats.Token("dev-main"), nats.MaxReconnects(0)); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("token before the authenticator: %v, want %v", err, nats.ErrAuthorization)
	}
	js, err := b.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(context.Background()); err != nil {
		t.Fatalf("internal connection has no JetStream: %v", err)
	}
}

func TestEmbeddedListenOff(t *testing.T) {
	for _, listen := range []string{"", ListenOff} {
		if u := startListening(t, listen).ClientURL(); u != "" {
			t.Errorf("Listen %q: client URL %q, want none", listen, u)
		}
	}
	if _, err := Start(context.Background(), Config{DataDir: t.TempDir(), Listen: "4222"}); err == nil {
		t.Error("Listen without a host:port started")
	}
}

// SPEC §9: replicas default to 1 embedded and 3 with nats_url, whatever
// the URL looks like; the replicas setting overrides both.
func TestReplicas(t *testing.T) {
	opts := server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true}
	s, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Shutdown)
	url := s.ClientURL()
	for _, c := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"embedded default", Config{}, 1},
		{"embedded override", Config{Replicas: 3}, 3},
		{"one url", Config{URLs: url}, 3},
		{"three urls", Config{URLs: url + "," + url + "," + url}, 3},
		{"override with urls", Config{URLs: url + "," + url, Replicas: 1}, 1},
	} {
		c.cfg.DataDir = t.TempDir()
		b, err := Start(context.Background(), c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if b.Replicas != c.want {
			t.Errorf("%s: replicas %d, want %d", c.name, b.Replicas, c.want)
		}
		b.Close()
	}
}
