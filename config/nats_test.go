package config

import (
	"strings"
	"testing"
)

// SPEC §10: nats_listen defaults to 127.0.0.1:4222 and "off" turns it off;
// replicas is left 0 (the broker's default: 1 embedded, 3 with nats_url)
// unless set.
func TestNATSKeys(t *testing.T) {
	c := Demo()
	if c.NATSListen != DefaultNATSListen || DefaultNATSListen != "127.0.0.1:4222" || c.Replicas != 0 {
		t.Fatalf("defaults: nats_listen %q replicas %d", c.NATSListen, c.Replicas)
	}
	c, err := Parse([]byte("nats_listen: \"off\"\nreplicas: 3\nnats_url: nats://a:4222\n" + base))
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSListen != "off" || c.Replicas != 3 {
		t.Fatalf("got nats_listen %q replicas %d, want off 3", c.NATSListen, c.Replicas)
	}
	if c, err = Parse([]byte("request_shards: 3\n" + base)); err != nil || c.RequestShards != 3 {
		t.Fatalf("request_shards 3: %v %d", err, c.RequestShards)
	}
}

func TestNATSKeysRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"nats_listen: \"4222\"\n", "nats_listen"},
		{"nats_listen: \"127.0.0.1:http\"\n", "nats_listen"},
		{"replicas: 7\n", "replicas"},
		{"replicas: -1\n", "replicas"},
		{"request_shards: 0\n", "line 1: request_shards: 0 is not 1 to 64"},
		{"request_shards: 65\n", "request_shards"},
		{"request_shards: -2\n", "request_shards"},
	} {
		if _, err := Parse([]byte(c.yaml + base)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %s", c.yaml, err, c.want)
		}
	}
}
