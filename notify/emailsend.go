package notify

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// mailRecord is what one request's people were sent, as the email bucket
// keeps it (key r.<tenant>.<request>), so that a restart, or another
// process taking the feed over, sends each message once and owes each
// reminder still due. It is removed once the request ends.
type mailRecord struct {
	People map[domain.MemberID]*personMail `json:"people"`
}

// personMail is what one person was sent about a request.
type personMail struct {
	// Ask is what they were last asked (askOf): the approver, the stage
	// and the moves; a write that asks something else sends again.
	Ask string `json:"ask"`
	// N is the messages sent to them about the request; the first (0)
	// opens the thread.
	N int `json:"n"`
	// RemindAt is when the reminder of Ask is due; zero once it is sent
	// (or none is owed).
	RemindAt time.Time `json:"remind_at,omitzero"`
}

// askOf is what a pending request asks of the people it waits on: a
// new approver, a later stage or a move to a backup is a new ask.
func askOf(r *domain.Request) string {
	moves := 0
	if r.Escalation != nil {
		moves = len(r.Escalation.Passed)
	}
	return r.Approver.Kind + ":" + r.Approver.ID + "/" + strconv.Itoa(r.CurrentStage) + "/" + strconv.Itoa(moves)
}

func recordKey(t domain.TenantID, id domain.RequestID) string {
	return "r." + string(t) + "." + string(id)
}

// handle sends what one request write asks for: a message to each person
// with an email it now waits on and has not been asked this yet. Each is
// tried in turn; those that failed are tried again after a backoff, so
// that one person's refused address never holds up the others. It
// returns false when ctx ended first (the write is read again).
func (f *mailFeed) handle(ctx context.Context, x *item) bool {
	if !strings.HasPrefix(events.ShortType(x.typ), "request.") {
		return true
	}
	var r domain.Request
	if err := json.Unmarshal(x.data, &r); err != nil || r.Approver == nil && r.Status == domain.StatusPending {
		return true
	}
	defer f.lock(r.ID)()
	if r.Status.Terminal() {
		f.forget(ctx, &r)
		return true
	}
	t, ok := f.m.cfg.Tenant(r.Tenant)
	if !ok {
		return true
	}
	var people []*domain.Member
	for _, p := range t.Awaiting(&r) {
		if mem := t.Members[p]; mem != nil && mem.Email != "" {
			people = append(people, mem)
		}
	}
	return f.askAll(ctx, x, &r, t, people)
}

// askAll tries each person's message until it is sent, superseded by a
// later write of the request, dropped (MaxAge after the write) or ctx
// ends (false).
func (f *mailFeed) askAll(ctx context.Context, x *item, r *domain.Request, t *domain.Tenant, people []*domain.Member) bool {
	m, tn := f.m.metrics, f.m.cfg.Tuning
	retrying := 0 // people in the retry backlog
	defer func() { m.backlog.Sub(float64(retrying)) }()
	for n := 1; ; n++ {
		if n > 1 && f.superseded(x) {
			f.log.Debug("email superseded by a later write of the request", "request", r.ID, "people", len(people))
			m.messages.WithLabelValues(kindRequest, mailSuperseded).Add(float64(len(people)))
			return true
		}
		var failed []*domain.Member
		for _, mem := range people {
			err := f.ask(ctx, x, r, t, mem)
			if ctx.Err() != nil {
				return false
			}
			if err != nil {
				failed = append(failed, mem)
				f.log.Debug("email attempt failed", "request", r.ID, "member", mem.ID, "attempt", n, "err", err)
			}
		}
		m.backlog.Add(float64(len(failed) - retrying))
		retrying, people = len(failed), failed
		switch {
		case len(failed) == 0:
			return true
		case time.Since(x.at) >= tn.MaxAge:
			f.log.Warn("email dropped after retrying", "request", r.ID, "people", len(failed), "attempts", n)
			m.messages.WithLabelValues(kindRequest, mailDropped).Add(float64(len(failed)))
			return true
		}
		m.messages.WithLabelValues(kindRequest, mailFailed).Add(float64(len(failed)))
		if !f.wait(ctx, x, backoff(tn, n)) {
			return false
		}
	}
}

// wait sleeps d, or less once a later write of x's request is queued;
// false when ctx ended.
func (f *mailFeed) wait(ctx context.Context, x *item, d time.Duration) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) && !f.superseded(x) {
		if !sleepCtx(ctx, min(time.Until(end), 200*time.Millisecond)) {
			return false
		}
	}
	return true
}

// superseded reports whether a later write of x's request is queued:
// then x's unsent messages are not retried (their links are stale), and
// the later write sends what it still asks.
func (f *mailFeed) superseded(x *item) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lanes[x.key]) > 1
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// ask makes one attempt at mem's message unless they were asked this
// already, and records it once sent; the error is the attempt's (nil
// also when there was nothing to send, or ctx ended).
func (f *mailFeed) ask(ctx context.Context, x *item, r *domain.Request, t *domain.Tenant, mem *domain.Member) error {
	rec, rev, ok := f.record(ctx, r.ID)
	if !ok {
		return nil
	}
	ask, pm := askOf(r), rec.People[mem.ID]
	if pm != nil && pm.Ask == ask {
		return nil
	}
	n := 0
	if pm != nil {
		n = pm.N
	}
	msg, err := f.compose(r, t, mem, n, kindRequest)
	if err != nil {
		f.log.Error("email not composed; dropped", "request", r.ID, "member", mem.ID, "err", err)
		return nil
	}
	if err := f.smtp.send(ctx, msg); err != nil {
		return err
	}
	f.m.metrics.messages.WithLabelValues(kindRequest, mailSent).Inc()
	next := &personMail{Ask: ask, N: n + 1, RemindAt: remindAt(mem, r, x.at)}
	rec.People[mem.ID] = next
	f.store(ctx, r.ID, rec, rev)
	if !next.RemindAt.IsZero() {
		f.mu.Lock()
		f.due[reminderKey{r.ID, mem.ID}] = next.RemindAt
		f.mu.Unlock()
	}
	return nil
}

// remindAt is when mem is reminded of r, which came to wait on them at
// since: half of their answer_within, else half of the time left.
func remindAt(mem *domain.Member, r *domain.Request, since time.Time) time.Time {
	half := mem.AnswerWithin / 2
	if half <= 0 {
		half = r.DeadlineAt.Sub(since) / 2
	}
	if half <= 0 {
		return time.Time{}
	}
	return since.Add(half)
}

// record reads a request's record (empty when there is none), retrying
// while the bucket is unreachable; ok is false when ctx ended first.
func (f *mailFeed) record(ctx context.Context, id domain.RequestID) (rec mailRecord, rev uint64, ok bool) {
	for n := 1; ; n++ {
		e, err := f.m.kv.Get(ctx, recordKey(f.mail.Tenant, id))
		switch {
		case err == nil:
			if json.Unmarshal(e.Value(), &rec) != nil || rec.People == nil {
				rec.People = map[domain.MemberID]*personMail{}
			}
			return rec, e.Revision(), true
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return mailRecord{People: map[domain.MemberID]*personMail{}}, 0, true
		}
		select {
		case <-ctx.Done():
			return rec, 0, false
		case <-time.After(backoff(f.m.cfg.Tuning, n)):
		}
	}
}

// store writes rec over revision rev (0: a new record). A failure is
// logged: the message may then be sent again, with the same Message-ID.
func (f *mailFeed) store(ctx context.Context, id domain.RequestID, rec mailRecord, rev uint64) {
	// What was sent is recorded even when a stop ends ctx between the
	// send and here: else the next start would owe, and send, it again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	b, _ := json.Marshal(rec)
	key := recordKey(f.mail.Tenant, id)
	var err error
	if rev == 0 {
		_, err = f.m.kv.Create(ctx, key, b)
	} else {
		_, err = f.m.kv.Update(ctx, key, b, rev)
	}
	if err != nil {
		f.log.Warn("email record not stored", "request", id, "err", err)
	}
}

// storeTimeout bounds recording what was sent, past the worker's end.
const storeTimeout = 5 * time.Second

// mailMarkerTTL is how long the marker of a removed record stays.
const mailMarkerTTL = time.Hour

// forget removes an ended request's record and its reminders; the
// marker the removal leaves expires after mailMarkerTTL, so the bucket
// holds the requests in flight only.
func (f *mailFeed) forget(ctx context.Context, r *domain.Request) {
	f.mu.Lock()
	for k := range f.due {
		if k.Request == r.ID {
			delete(f.due, k)
			delete(f.tries, k)
		}
	}
	delete(f.locks, r.ID) // held by the caller, which unlocks the one it has
	f.mu.Unlock()
	key := recordKey(f.mail.Tenant, r.ID)
	if _, err := f.m.kv.Get(ctx, key); err != nil { // none (nobody was mailed), or it is read again later
		return
	}
	if err := f.m.kv.Purge(ctx, key, jetstream.PurgeTTL(mailMarkerTTL)); err != nil && ctx.Err() == nil {
		f.log.Warn("email record not removed", "request", r.ID, "err", err)
	}
}
