package review_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/countersign/countersign/deciders/review"
	"github.com/nats-io/nats.go"
)

// An agent's runtime: it takes agt_programmer's reviews and answers over
// the bus with the agent's own token. Run as many instances as you like.
func ExampleServe() {
	token := os.Getenv("COUNTERSIGN_TOKEN")
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.Token(token),
		nats.CustomInboxPrefix("_INBOX.demo.agent.agt_programmer")) // events.InboxPrefix: a token subscribes only there
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = review.Serve(ctx, nc, token, func(ctx context.Context, b review.Bundle) (review.Answer, error) {
		if b.Request.Capability.Target == "issue_refund" && strings.Contains(b.Decider.Brief, "refund") {
			return review.Answer{Decision: review.Allow, Scope: "once", Reason: "Part of the brief I gave."}, nil
		}
		return review.Answer{Decision: review.Abstain, Reason: "Not mine to judge."}, nil
	}, review.For("demo", "agt_programmer"))
	if err != nil {
		log.Fatal(err)
	}
}
