package approvals

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// Reasons of a submit refused by a quota (SPEC §5 "Quotas"), in the
// problem's reason and the metric's label.
const (
	ReasonSubmitRate = "submit_rate"
	ReasonMaxPending = "max_pending"
)

// quotas holds the submit quotas: a token bucket per token, and the
// submits of each agent between their pending check and their record
// reaching the mirror.
type quotas struct {
	mu       sync.Mutex
	buckets  map[string]*rate.Limiter // by tenant and token
	inFlight map[string]int           // by tenant and agent
	refused  *prometheus.CounterVec
}

func newQuotas() *quotas {
	q := &quotas{buckets: map[string]*rate.Limiter{}, inFlight: map[string]int{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_submits_rate_limited_total",
			Help: "Submits refused with 429 RateLimited by a quota, by tenant and reason (submit_rate, max_pending)."},
			[]string{"tenant", "reason"})}
	return q
}

// refuse counts a refusal and returns it.
func (q *quotas) refuse(t *domain.Tenant, reason, detail string) error {
	q.refused.WithLabelValues(string(t.ID), reason).Inc()
	return ErrRateLimited.With(detail).WithReason(reason)
}

// allow takes one submit from the bucket of c's token at now: SubmitRate
// a second, in bursts of SubmitBurst.
func (q *quotas) allow(c Caller, now time.Time) error {
	t := c.Tenant
	key := string(t.ID) + "\x00" + c.Token.SHA256 + "\x00" + c.Principal.ID
	limit, burst := rate.Limit(orDefault(t.SubmitRate, domain.DefaultSubmitRate)), orDefault(t.SubmitBurst, domain.DefaultSubmitBurst)
	q.mu.Lock()
	b := q.buckets[key]
	if b == nil || b.Limit() != limit || b.Burst() != burst { // new, or the config changed: a full bucket
		b = rate.NewLimiter(limit, burst)
		q.buckets[key] = b
	}
	q.mu.Unlock()
	if !b.AllowN(now, 1) {
		return q.refuse(t, ReasonSubmitRate, "this token submits too fast; retry shortly")
	}
	return nil
}

// reserve counts one more pending request of agent unless the agent has
// MaxPending already (those in the mirror, and those this process is
// creating); release, called once the request is in the mirror or was
// not created, gives the place back. A request counts twice between its
// Apply and its release: a concurrent submit then may be refused early,
// never let through.
func (q *quotas) reserve(views *views.Views, t *domain.Tenant, agent domain.AgentID) (release func(), ok bool) {
	key := string(t.ID) + "\x00" + string(agent)
	q.mu.Lock()
	defer q.mu.Unlock()
	if views.PendingOf(t.ID, agent)+q.inFlight[key] >= orDefault(t.MaxPending, domain.DefaultMaxPending) {
		return nil, false
	}
	q.inFlight[key]++
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.inFlight[key]--; q.inFlight[key] <= 0 {
			delete(q.inFlight, key)
		}
	}, true
}

// reservePending reserves a pending place for c's submit (reserve). A
// repeat of an Idempotency-Key that exists stores nothing new and is
// never refused here: it goes on to find its request (or its 422).
func (s *Service) reservePending(ctx context.Context, c Caller, idemKey string) (release func(), err error) {
	release, ok := s.quota.reserve(s.views, c.Tenant, domain.AgentID(c.Principal.ID))
	if ok {
		return release, nil
	}
	if idemKey != "" {
		_, err := s.store.LookupIdempotency(ctx, kvstate.IdempotencyKey(c.Tenant.ID, c.Principal, idemKey))
		switch {
		case err == nil:
			return func() {}, nil
		case !errors.Is(err, kvstate.ErrNotFound):
			return nil, stateErr(err, ErrUnavailable)
		}
	}
	return nil, s.quota.refuse(c.Tenant, ReasonMaxPending, "this agent has max_pending requests pending; retry once one is answered")
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
