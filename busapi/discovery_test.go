package busapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/busapi"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/broker"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// adminPrefix is tokAdmin's inbox prefix (service:ops of acme).
var adminPrefix = events.InboxPrefix("acme", domain.Ref{Kind: domain.KindService, ID: "ops"})

// discover sends a control request of verb as tokAdmin, with its token,
// from its own connection into its own inbox, and returns the answer.
func (e *env) discover(verb micro.Verb, kind, id string) *nats.Msg {
	e.t.Helper()
	subj, err := micro.ControlSubject(verb, kind, id)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := e.client(tokAdmin).RequestMsg(msg(e.t, subj, tokAdmin, nil), 5*time.Second)
	if err != nil {
		e.t.Fatalf("%s: %v", subj, err)
	}
	return m
}

// TestDiscovery: the micro control subjects (what nats micro ls and nats
// micro info use) list the countersign service and its endpoints to an
// admin token that says who it is (Authorization, as on every bus
// message) and asks into its own inbox.
func TestDiscovery(t *testing.T) {
	e := start(t, acmeYAML)
	var info micro.Info
	if err := json.Unmarshal(e.discover(micro.InfoVerb, busapi.ServiceName, "").Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "countersign" || info.Version != busapi.ServiceVersion {
		t.Errorf("info: %+v", info)
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
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("endpoints %v, want %v", got, want)
	}
	var ping micro.Ping
	if err := json.Unmarshal(e.discover(micro.PingVerb, "", "").Data, &ping); err != nil || ping.ID != info.ID || ping.Type != micro.PingResponseType {
		t.Errorf("ping %+v (%v), want the service's id %s", ping, err, info.ID)
	}
	var stats micro.Stats
	if err := json.Unmarshal(e.discover(micro.StatsVerb, busapi.ServiceName, info.ID).Data, &stats); err != nil || len(stats.Endpoints) != len(events.APIOps) {
		t.Errorf("stats %+v (%v)", stats, err)
	}
}

// TestDiscoveryRepliesOnlyToTheCallersInbox: no discovery reply goes
// outside the caller's own inbox prefix (SPEC §9 "Discovery"). An admin
// token that names another principal's inbox (of its tenant or another)
// as the reply, and a message whose token is missing or unknown, get
// nothing published anywhere; a token without scope admin (sent on
// countersign's own connection: the server refuses it $SRV) gets 403 in
// its own inbox and nothing else.
func TestDiscoveryRepliesOnlyToTheCallersInbox(t *testing.T) {
	e := start(t, acmeYAML)
	adm := e.client(tokAdmin)
	person := events.InboxPrefix("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"})
	globex := events.InboxPrefix("globex", domain.Ref{Kind: domain.KindAgent, ID: "agt_x"})
	// Watch every inbox a reply was aimed at (not all of _INBOX.>: the
	// server's own JetStream calls answer in inboxes of their own, at any
	// moment).
	watch := make(chan *nats.Msg, 256)
	for _, p := range []string{person, globex, adminPrefix} {
		sub, err := e.nc.ChanSubscribe(p+".>", watch)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []micro.Verb{micro.PingVerb, micro.InfoVerb, micro.StatsVerb} {
		subj, _ := micro.ControlSubject(verb, "", "")
		for _, c := range []struct{ token, reply string }{
			{tokAdmin, person + ".forged"},
			{tokAdmin, globex + ".forged"},
			{"", adminPrefix + ".notoken"},
			{"tok-unknown", adminPrefix + ".unknown"},
			{tokPerson, person + ".notadmin"},
		} {
			m := msg(t, subj, c.token, nil)
			m.Reply = c.reply
			from := adm
			if c.token != tokAdmin {
				from = e.nc // a token the server refuses $SRV
			}
			if err := from.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		}
		// One subscription answers subj, in order: once this answer is in,
		// the messages before it were answered or dropped.
		if m := e.discover(verb, "", ""); m.Header.Get(micro.ErrorCodeHeader) != "" {
			t.Fatalf("%s: %v", subj, m.Header)
		}
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var notAdmin int
	for drained := false; !drained; {
		var m *nats.Msg
		select {
		case m = <-watch:
		default:
			drained = true
			continue
		}
		switch {
		case strings.HasPrefix(m.Subject, adminPrefix+".") && m.Data != nil && !strings.Contains(m.Subject, "notoken") && !strings.Contains(m.Subject, "unknown"):
			// the admin's own answers
		case strings.HasSuffix(m.Subject, ".notadmin") && m.Header.Get(micro.ErrorCodeHeader) == "403":
			notAdmin++
		default:
			t.Errorf("a discovery reply on %s: %v %s", m.Subject, m.Header, m.Data)
		}
	}
	if notAdmin != 3 {
		t.Errorf("%d 403s in the caller's inbox, want 3", notAdmin)
	}
}

// TestDiscoveryMicroHandlersRefused: on the embedded server the responder
// holds $SRV subscriptions only in the queue group busapi answers in;
// micro's own control handlers, which answer wherever the asker says,
// were refused theirs.
func TestDiscoveryMicroHandlersRefused(t *testing.T) {
	e := start(t, acmeYAML)
	e.discover(micro.PingVerb, "", "")
	cz, err := e.srv.App.Broker.Server.Connz(&server.ConnzOptions{Username: true, SubscriptionsDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	var srv int
	for _, c := range cz.Conns {
		if c.AuthorizedUser != broker.ResponderUser {
			continue
		}
		for _, s := range c.SubsDetail {
			if !strings.HasPrefix(s.Subject, "$SRV.") {
				continue
			}
			srv++
			if s.Queue != events.DiscoveryQueue {
				t.Errorf("responder subscribes to %s in queue %q", s.Subject, s.Queue)
			}
		}
	}
	if srv == 0 {
		t.Fatal("no $SRV subscription of the responder")
	}
}
