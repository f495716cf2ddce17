package broker

import (
	"testing"
)

// Interest sees the embedded server's subscriptions, from any connection
// of the process, and says nothing of an external server's.
func TestInterest(t *testing.T) {
	b := startListening(t, "")
	listens := b.Interest()
	if listens == nil {
		t.Fatal("no interest on the embedded server")
	}
	const subject = "countersign.acme.people.u-1"
	if listens(subject) {
		t.Fatal("interest before anyone subscribed")
	}
	js, err := b.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := js.Conn().SubscribeSync("countersign.acme.people.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if !listens(subject) || listens("countersign.acme.people.u-2.x") {
		t.Fatalf("after a subscription to people.*: %v for %s, %v for a subject it does not match", listens(subject), subject, listens("countersign.acme.people.u-2.x"))
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if listens(subject) {
		t.Fatal("interest after the unsubscribe")
	}
	if (&Broker{}).Interest() != nil {
		t.Fatal("an external server's interest is not seen here: want nil")
	}
}
