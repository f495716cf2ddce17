package broker

import (
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// deploy/nats's cluster config loads, fsyncs always, and hands every login
// but countersign's own user to the auth callout with the issuer from the
// environment.
func TestDeployNATSConfigHasAuthCallout(t *testing.T) {
	kp, _ := nkeys.CreateAccount()
	pub, _ := kp.PublicKey()
	t.Setenv("COUNTERSIGN_NATS_PASSWORD", "0123abcd")
	t.Setenv("COUNTERSIGN_CALLOUT_ISSUER", pub)
	for _, f := range []string{"nats-1.conf", "nats-2.conf", "nats-3.conf"} {
		o, err := server.ProcessConfigFile("../../deploy/nats/" + f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !o.SyncAlways {
			t.Errorf("%s: sync_interval is not always", f)
		}
		ac := o.AuthCallout
		if ac == nil || ac.Issuer != pub || !slices.Equal(ac.AuthUsers, []string{InternalUser}) {
			t.Errorf("%s: auth_callout = %+v, want issuer %s and auth_users [%s]", f, ac, pub, InternalUser)
		}
		if len(o.Users) != 1 || o.Users[0].Username != InternalUser || o.Users[0].Password != "0123abcd" {
			t.Errorf("%s: users = %+v, want only %s", f, o.Users, InternalUser)
		}
	}
}
