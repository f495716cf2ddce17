package events

import "testing"

func TestInboxOfTenant(t *testing.T) {
	for reply, want := range map[string]bool{
		"_INBOX.acme.agent.agt_main.abc":     true,
		"_INBOX.acme.person.u-1.abc.7":       true,
		"_INBOX.acme.service.~0123.abc":      true,
		"_INBOX.acme.agent.agt_main":         false, // the prefix itself
		"_INBOX.acme.group.g-1.abc":          false, // no token has a group principal
		"_INBOX.acme.agent.agt_main.*":       false,
		"_INBOX.acme.agent.agt_main.>":       false,
		"_INBOX.acme.agent..abc":             false,
		"_INBOX.globex.agent.agt_x.abc":      false,
		"_INBOX.acmeco.agent.agt_x.abc":      false,
		"_INBOX.abcdefghij.1":                false, // countersign's own, nats.go's default
		"countersign.acme.review.agt_main":   false,
		"_INBOX.acme.agent.agt_main.a b":     false,
		"$KV.requests.acme.req_01ABCDEFGHJK": false,
	} {
		if got := InboxOfTenant("acme", reply); got != want {
			t.Errorf("InboxOfTenant(acme, %q) = %v, want %v", reply, got, want)
		}
	}
}
