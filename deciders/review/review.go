package review

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// Bundle is the review bundle of one offer: the request (its revision is
// the one to answer) and the decider as its review sees it.
type Bundle = domain.ReviewBundle

// Decisions an Answer may carry.
const (
	Allow   = "allow"
	Deny    = "deny"
	Abstain = "abstain"
)

// Answer is a runtime's answer to one review. Scope is "once" when empty.
type Answer struct {
	Decision string // Allow, Deny or Abstain
	Scope    string // once, session or lifetime (allow and deny)
	Reason   string
}

// Func reviews one bundle. Its ctx ends at the request's deadline or when
// Serve stops.
type Func func(ctx context.Context, b Bundle) (Answer, error)

// Defaults of the options.
const (
	DefaultConcurrency = 16
	DefaultAnswerWait  = 5 * time.Second
)

type options struct {
	tenant      domain.TenantID
	agent       domain.AgentID
	concurrency int
	answerWait  time.Duration
	log         *slog.Logger
}

// Option tunes Serve. Options validate their argument; Serve returns the
// first error.
type Option func(*options) error

// For names the agent whose reviews this runtime takes. Required.
func For(tenant domain.TenantID, agent domain.AgentID) Option {
	return func(o *options) error {
		if tenant == "" || agent == "" {
			return ErrNoAgent
		}
		o.tenant, o.agent = tenant, agent
		return nil
	}
}

// WithConcurrency bounds the reviews one instance runs at once (default
// DefaultConcurrency); past it, offers are left for other instances.
func WithConcurrency(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("review: concurrency must be at least 1, got %d", n)
		}
		o.concurrency = n
		return nil
	}
}

// WithAnswerWait bounds each attempt to deliver an answer (default
// DefaultAnswerWait).
func WithAnswerWait(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("review: answer wait must be positive, got %v", d)
		}
		o.answerWait = d
		return nil
	}
}

// WithLogger logs taken offers' failures and refused answers (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.log = l; return nil }
}

// Serve takes the review offers of one agent (For) on nc until ctx ends,
// reviews each with fn and answers over the bus with token (the agent's
// countersign token). It returns nil when ctx ends, after the reviews in
// flight stopped, or an error if it cannot subscribe or an option is bad.
// nc must be the agent's own connection: its token as the NATS token and
// its inbox prefix (nats.CustomInboxPrefix(events.InboxPrefix(tenant,
// agent))), since countersign answers only into the caller's own inbox; on
// any other connection the answers time out. See the package
// documentation for the contract.
func Serve(ctx context.Context, nc *nats.Conn, token string, fn Func, opts ...Option) error {
	o := options{concurrency: DefaultConcurrency, answerWait: DefaultAnswerWait, log: slog.Default()}
	for _, f := range opts {
		if err := f(&o); err != nil {
			return err
		}
	}
	if o.agent == "" {
		return ErrNoAgent
	}
	rt := &Runtime{
		Subject: events.ReviewSubject(o.tenant, o.agent), Queue: events.ReviewQueue,
		Review: fn, Answer: BusAnswer(nc, o.tenant, token, o.answerWait),
		Concurrency: o.concurrency, Logger: o.log,
	}
	return rt.Run(ctx, nc)
}

// Decode reads an offer: its CloudEvent headers (type
// dev.countersign.review.requested) and its bundle. Errors wrap ErrBadOffer.
func Decode(m *nats.Msg) (Bundle, error) {
	var b Bundle
	e, err := events.DecodeHeaders(m.Header)
	if err != nil {
		return b, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	if e.Type() != events.TypeReviewRequested {
		return b, fmt.Errorf("%w: type %q", ErrBadOffer, e.Type())
	}
	if err := json.Unmarshal(m.Data, &b); err != nil {
		return b, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	if string(b.Request.ID) != e.Subject() || b.Decider.ID == "" {
		return b, fmt.Errorf("%w: bundle does not match its event", ErrBadOffer)
	}
	return b, nil
}
