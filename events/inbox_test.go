package events

import (
	"strings"
	"testing"
)

// The inbox prefix is readable for ids that are plain subject tokens and a
// hash for anything else, so it is always _INBOX plus three tokens and
// never a wildcard.
func TestInboxPrefix(t *testing.T) {
	for _, c := range []struct {
		p    Ref
		want string
	}{
		{Ref{Kind: KindAgent, ID: "agt_main"}, "_INBOX.acme.agent.agt_main"},
		{Ref{Kind: KindAgent, ID: "agt_01JABCDEFGHJKMNPQRSTVWXYZ0"}, "_INBOX.acme.agent.agt_01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{Ref{Kind: KindPerson, ID: "u-1"}, "_INBOX.acme.person.u-1"},
	} {
		if got := InboxPrefix("acme", c.p); got != c.want {
			t.Errorf("InboxPrefix(%v) = %q, want %q", c.p, got, c.want)
		}
	}
	for _, name := range []string{"billing.eu", "*", ">", "a b", ""} {
		got := InboxPrefix("acme", Ref{Kind: KindService, ID: name})
		want := "_INBOX.acme.service.~" + HashToken(name)[:32]
		if got != want || strings.Count(got, ".") != 3 {
			t.Errorf("service %q: prefix %q, want %q", name, got, want)
		}
	}
}
