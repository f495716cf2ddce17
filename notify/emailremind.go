package notify

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/countersign/countersign/domain"
)

// loadReminders reads the reminders owed from the tenant's records.
func (f *mailFeed) loadReminders(ctx context.Context) error {
	kl, err := f.m.kv.ListKeysFiltered(ctx, recordKey(f.mail.Tenant, "*"))
	if err != nil {
		return err
	}
	defer func() { _ = kl.Stop() }()
	for key := range kl.Keys() {
		e, err := f.m.kv.Get(ctx, key)
		var rec mailRecord
		if err != nil || json.Unmarshal(e.Value(), &rec) != nil {
			continue
		}
		id := domain.RequestID(key[len(recordKey(f.mail.Tenant, "")):])
		f.mu.Lock()
		for m, pm := range rec.People {
			if !pm.RemindAt.IsZero() {
				f.due[reminderKey{id, m}] = pm.RemindAt
			}
		}
		f.mu.Unlock()
	}
	return nil
}

// remind sends the reminders as they fall due, until ctx ends.
func (f *mailFeed) remind(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		for _, k := range f.dueNow() {
			f.remindOne(ctx, k)
		}
	}
}

// dueNow lists the reminders due on the clock, oldest first.
func (f *mailFeed) dueNow() []reminderKey {
	now := f.m.cfg.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []reminderKey
	for k, at := range f.due {
		if !at.After(now) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b reminderKey) int { return f.due[a].Compare(f.due[b]) })
	return out
}

// remindOne makes one attempt at reminder k, if the request still asks
// the person what they were asked; a failed attempt is tried again after
// a backoff, until MaxAge after it fell due. A request whose lane is
// busy is left for the next round, so that one stuck request never holds
// up the others' reminders.
func (f *mailFeed) remindOne(ctx context.Context, k reminderKey) {
	unlock, ok := f.tryLock(k.Request)
	if !ok {
		return // its lane is sending; the next round tries again
	}
	defer unlock()
	done := func() {
		f.mu.Lock()
		delete(f.due, k)
		delete(f.tries, k)
		f.mu.Unlock()
	}
	rec, rev, ok := f.record(ctx, k.Request)
	pm := rec.People[k.Member]
	if !ok || pm == nil || pm.RemindAt.IsZero() {
		done()
		return
	}
	r, err := f.m.cfg.Request(ctx, f.mail.Tenant, k.Request)
	if err != nil {
		f.retryReminder(k, pm, err)
		return
	}
	t, _ := f.m.cfg.Tenant(f.mail.Tenant)
	mem := memberOf(t, k.Member)
	if r == nil || t == nil || mem == nil || mem.Email == "" || r.Approver == nil || askOf(r) != pm.Ask || !slices.Contains(t.Awaiting(r), k.Member) {
		pm.RemindAt = time.Time{}
		f.store(ctx, k.Request, rec, rev)
		done()
		return
	}
	msg, err := f.compose(r, t, mem, pm.N, kindReminder)
	if err == nil {
		err = f.smtp.send(ctx, msg)
	}
	if err != nil {
		f.retryReminder(k, pm, err)
		return
	}
	f.m.metrics.messages.WithLabelValues(kindReminder, mailSent).Inc()
	pm.N, pm.RemindAt = pm.N+1, time.Time{}
	f.store(ctx, k.Request, rec, rev)
	done()
}

func memberOf(t *domain.Tenant, m domain.MemberID) *domain.Member {
	if t == nil {
		return nil
	}
	return t.Members[m]
}

// retryReminder counts a failed reminder and sets its next attempt, or
// drops it MaxAge after it fell due.
func (f *mailFeed) retryReminder(k reminderKey, pm *personMail, err error) {
	tn := f.m.cfg.Tuning
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m.cfg.Clock.Now().Sub(pm.RemindAt) >= tn.MaxAge {
		f.log.Warn("email reminder dropped after retrying", "request", k.Request, "member", k.Member, "err", err)
		f.m.metrics.messages.WithLabelValues(kindReminder, mailDropped).Inc()
		delete(f.due, k)
		delete(f.tries, k)
		return
	}
	f.m.metrics.messages.WithLabelValues(kindReminder, mailFailed).Inc()
	f.tries[k]++
	f.due[k] = f.m.cfg.Clock.Now().Add(backoff(tn, f.tries[k]))
	f.log.Debug("email reminder attempt failed", "request", k.Request, "member", k.Member, "err", err)
}
