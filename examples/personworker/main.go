// Command personworker is a person's worker on the countersign bus (SPEC §9,
// "People's workers on the bus"): it hears of each request that comes to
// wait on its person, prints it, and answers as that person over NATS
// alone. Reads (tools named read_* or get_*) are allowed at once; anything
// else is asked on stdin, or answered with -answer. Replace ask with a
// chat message and its reply, and it is a chat bot.
//
//	COUNTERSIGN_TOKEN=<the person's token> go run ./examples/personworker -tenant demo -person u-1
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("nats", "nats://127.0.0.1:4222", "countersign's NATS URL (serve prints it)")
	tenant := flag.String("tenant", "demo", "your tenant")
	person := flag.String("person", "u-1", "your member id")
	answer := flag.String("answer", "", "answer everything allow or deny instead of asking")
	flag.Parse()
	token := os.Getenv("COUNTERSIGN_TOKEN")
	me := domain.Ref{Kind: domain.KindPerson, ID: *person}
	nc, err := nats.Connect(*url, nats.Token(token), nats.CustomInboxPrefix(events.InboxPrefix(domain.TenantID(*tenant), me)))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	decide := ask(bufio.NewReader(os.Stdin), os.Stdout)
	if *answer != "" {
		decide = func(*domain.Request) string { return *answer }
	}
	if err := run(ctx, nc, token, domain.TenantID(*tenant), domain.MemberID(*person), decide, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run prints and answers the reviews of person until ctx ends.
func run(ctx context.Context, nc *nats.Conn, token string, tenant domain.TenantID, person domain.MemberID,
	decide func(*domain.Request) string, out io.Writer) error {
	msgs := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(events.PeopleSubject(tenant, person), msgs)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-msgs:
			handle(ctx, nc, token, m, decide, out)
		}
	}
}

func handle(ctx context.Context, nc *nats.Conn, token string, m *nats.Msg, decide func(*domain.Request) string, out io.Writer) {
	ev, err := review.DecodePerson(m)
	switch {
	case err != nil:
		fmt.Fprintln(out, "skipped:", err)
	case ev.Withdrawn != nil:
		fmt.Fprintf(out, "%s no longer waits on you: %s\n", ev.Withdrawn.RequestID, ev.Withdrawn.Status)
	default:
		r := &ev.Requested.Request
		fmt.Fprintf(out, "%s: %s wants %s %s (%s)\n", r.ID, r.Agent, r.Capability, r.Arguments, r.Reason)
		d := review.Allow
		if t := r.Capability.Target; !strings.HasPrefix(t, "read_") && !strings.HasPrefix(t, "get_") {
			d = decide(r)
		}
		err := review.AnswerRequest(ctx, nc, token, r, review.Answer{Decision: d, Reason: "answered on the bus"}, 5*time.Second)
		fmt.Fprintf(out, "%s: %s (error: %v)\n", r.ID, d, err)
	}
}

// ask asks on in for each request: y allows, anything else denies.
func ask(in *bufio.Reader, out io.Writer) func(*domain.Request) string {
	return func(r *domain.Request) string {
		fmt.Fprintf(out, "allow %s? [y/N] ", r.ID)
		line, _ := in.ReadString('\n')
		if strings.TrimSpace(strings.ToLower(line)) == "y" {
			return review.Allow
		}
		return review.Deny
	}
}
