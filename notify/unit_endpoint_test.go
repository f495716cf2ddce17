package notify

import (
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/events"
)

// An endpoint is an absolute http(s) URL, of a known format, signed unless
// it is Slack's, subscribed only to known event types; every other one is
// refused with ErrConfig and a message naming what is wrong.
func TestEndpointValidate(t *testing.T) {
	key := []byte("k")
	for _, tc := range []struct {
		name string
		e    Endpoint
		want string // a part of the error; "" valid
	}{
		{"https, signed", Endpoint{URL: "https://hooks.example/x", Key: key}, ""},
		{"http, signed", Endpoint{URL: "http://127.0.0.1:8080/x", Key: key}, ""},
		{"slack unsigned", Endpoint{URL: "https://hooks.slack.example/T", Format: FormatSlack}, ""},
		{"known events", Endpoint{URL: "https://h.example", Key: key, Events: []string{"request.created", "grant.revoked"}}, ""},
		{"no url", Endpoint{Key: key}, "must be an absolute http(s) URL"},
		{"a relative url", Endpoint{URL: "/hooks", Key: key}, "must be an absolute http(s) URL"},
		{"no host", Endpoint{URL: "https:///x", Key: key}, "must be an absolute http(s) URL"},
		{"another scheme", Endpoint{URL: "ftp://h.example/x", Key: key}, "must be an absolute http(s) URL"},
		{"a url that does not parse", Endpoint{URL: "https://h.example/%zz", Key: key}, "must be an absolute http(s) URL"},
		{"an unknown format", Endpoint{URL: "https://h.example", Key: key, Format: "teams"}, `webhook format "teams"`},
		{"cloudevents unsigned", Endpoint{URL: "https://h.example"}, "needs secret_env"},
		{"cloudevents with an empty key", Endpoint{URL: "https://h.example", Key: []byte{}}, "needs secret_env"},
		{"an unknown event", Endpoint{URL: "https://h.example", Key: key, Events: []string{"request.created", "request.exploded"}}, `webhook event "request.exploded"`},
		{"a full event type", Endpoint{URL: "https://h.example", Key: key, Events: []string{events.TypeRequestCreated}}, "webhook event"},
	} {
		err := tc.e.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want ErrConfig saying %q", tc.name, err, tc.want)
		}
	}
}

// A format left empty is cloudevents, which needs a key.
func TestEndpointFormatDefaultsToCloudEvents(t *testing.T) {
	e := Endpoint{URL: "https://h.example", Key: []byte("k")}
	if err := e.Validate(); err != nil || e.Format != FormatCloudEvents {
		t.Fatalf("Validate: %v, format %q, want %q", err, e.Format, FormatCloudEvents)
	}
}

// An endpoint with no events listed wants every one; with a list, only
// those, matched by their short type.
func TestEndpointWants(t *testing.T) {
	all := Endpoint{}
	some := Endpoint{Events: []string{"request.decided"}}
	for _, typ := range []string{events.TypeRequestCreated, events.TypeRequestDecided, events.TypeGrantRevoked} {
		if !all.wants(typ) {
			t.Errorf("an endpoint of every event does not want %s", typ)
		}
		if got, want := some.wants(typ), typ == events.TypeRequestDecided; got != want {
			t.Errorf("an endpoint of request.decided wants %s: %v, want %v", typ, got, want)
		}
	}
}

// An endpoint's id is what it is: the same endpoint has the same id, and a
// change of tenant, format or URL is another (its progress starts anew);
// its key and events are not part of it.
func TestEndpointID(t *testing.T) {
	base := Endpoint{Tenant: "acme", URL: "https://h.example/x", Format: FormatCloudEvents, Key: []byte("k")}
	id := base.id()
	if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("id %q is not 16 lowercase hex digits", id)
	}
	same := base
	same.Key, same.Events = []byte("other"), []string{"request.created"}
	if same.id() != id {
		t.Errorf("a new key or event list changed the id")
	}
	for name, e := range map[string]Endpoint{
		"tenant": {Tenant: "beta", URL: base.URL, Format: base.Format},
		"format": {Tenant: base.Tenant, URL: base.URL, Format: FormatSlack},
		"url":    {Tenant: base.Tenant, URL: base.URL + "/", Format: base.Format},
	} {
		if e.id() == id {
			t.Errorf("another %s, the same id", name)
		}
	}
}
