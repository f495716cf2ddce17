package busapi_test

import (
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/countersign/countersign/busapi"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/micro"
)

// TestDiscovery: the micro control subjects (what nats micro ls and nats
// micro info use) list the countersign service and its endpoints to an
// admin token's connection (no other token reaches $SRV; the responder
// answers only into tenant inboxes).
func TestDiscovery(t *testing.T) {
	e := start(t, acmeYAML)
	nc := e.client(tokAdmin)
	subj, err := micro.ControlSubject(micro.InfoVerb, busapi.ServiceName, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := nc.Request(subj, nil, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	var info micro.Info
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "countersign" || info.Version != busapi.ServiceVersion {
		t.Errorf("info: %s", m.Data)
	}
	var got, want []string
	for _, ep := range info.Endpoints {
		got = append(got, ep.Name+" "+ep.Subject)
	}
	for _, op := range events.APIOps {
		want = append(want, op+" countersign.*.api."+op)
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("endpoints %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("endpoint %q, want %q", got[i], want[i])
		}
	}
	ping, _ := micro.ControlSubject(micro.PingVerb, "", "")
	if _, err := nc.Request(ping, nil, 5*time.Second); err != nil {
		t.Errorf("%s: %v", ping, err)
	}
}
