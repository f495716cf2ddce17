package busapi

import (
	"errors"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// discoveryVerbs are the micro control verbs countersign answers itself.
var discoveryVerbs = []micro.Verb{micro.PingVerb, micro.InfoVerb, micro.StatsVerb}

// listenDiscovery answers micro discovery ($SRV.PING, $SRV.INFO,
// $SRV.STATS: bare, for the service and for this instance) in the queue
// group events.DiscoveryQueue, under the bus API's rule: a message whose
// token does not authenticate, or whose reply subject is not its caller's
// own inbox, is never answered; a token without scope admin is answered
// 403 in its inbox. micro's own control handlers answer wherever the
// asker says, so the embedded server refuses them their subscriptions
// (broker: the responder may subscribe to $SRV only in this queue group).
func (s *Server) listenDiscovery() error {
	id := s.ms.Info().ID
	for _, verb := range discoveryVerbs {
		for _, kind := range [][2]string{{"", ""}, {ServiceName, ""}, {ServiceName, id}} {
			subj, err := micro.ControlSubject(verb, kind[0], kind[1])
			if err != nil {
				return err
			}
			sub, err := s.nc.QueueSubscribe(subj, events.DiscoveryQueue, s.discovery(verb))
			if err != nil {
				return err
			}
			s.discover = append(s.discover, sub)
		}
	}
	return nil
}

// discovery answers one verb's control messages on the subscription's
// goroutine (no I/O but the reply).
func (s *Server) discovery(verb micro.Verb) nats.MsgHandler {
	op := "$SRV." + verb.String()
	return func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		auth := header(micro.Headers(m.Header), "Authorization")
		c, err := s.svc.Authenticate(auth, nil)
		if err != nil {
			err = errNoCaller
		} else if !inbox(m.Reply, events.InboxPrefix(c.Tenant.ID, c.Principal)) {
			err = errForeignReply
		}
		if err != nil {
			s.drop(m.Subject, m.Reply, op, c, err)
			return
		}
		if _, err := s.svc.Admit(auth, approvals.OpDiscover, nil); err != nil {
			s.failTo(m.Reply, op, err)
			return
		}
		s.served.WithLabelValues(op, "200").Inc()
		s.publish(m.Reply, &nats.Msg{Header: nats.Header{"Content-Type": {"application/json"}}, Data: encode(s.figures(verb))})
	}
}

// figures is micro's answer to verb: the service's ping, info or stats.
func (s *Server) figures(verb micro.Verb) any {
	switch verb {
	case micro.InfoVerb:
		return s.ms.Info()
	case micro.StatsVerb:
		return s.ms.Stats()
	}
	return micro.Ping{ServiceIdentity: s.ms.Info().ServiceIdentity, Type: micro.PingResponseType}
}

// stopDiscovery ends the discovery subscriptions.
func (s *Server) stopDiscovery() error {
	var errs []error
	for _, sub := range s.discover {
		errs = append(errs, sub.Unsubscribe())
	}
	return errors.Join(errs...)
}
