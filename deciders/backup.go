package deciders

import (
	"slices"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// Backup returns the person r moves to when its approver, a person, has
// not answered within their answer_within (SPEC §12): their backup, unless
// r has already moved away from that backup (a chain of backups never
// loops back). ok is false when r does not wait on a person, or that
// person has no backup to move to.
func Backup(v *views.Views, r *domain.Request) (to domain.Ref, within time.Duration, ok bool) {
	return backupOf(v, r.Tenant, r.Approver, r.Escalation)
}

// backupOf is Backup of a request of tenant waiting on approver, last
// moved by esc (nil: never moved).
func backupOf(v *views.Views, tenant domain.TenantID, approver *domain.Ref, esc *domain.Escalation) (to domain.Ref, within time.Duration, ok bool) {
	if approver == nil || approver.Kind != domain.KindPerson {
		return domain.Ref{}, 0, false
	}
	t, ok := v.Tenant(tenant)
	if !ok {
		return domain.Ref{}, 0, false
	}
	return BackupIn(t, approver, esc)
}

// BackupIn is Backup of a request of tenant t waiting on approver, last
// moved by esc (nil: never moved): what t's config says, with no I/O.
func BackupIn(t *domain.Tenant, approver *domain.Ref, esc *domain.Escalation) (to domain.Ref, within time.Duration, ok bool) {
	if approver == nil || approver.Kind != domain.KindPerson {
		return domain.Ref{}, 0, false
	}
	m := t.Members[domain.MemberID(approver.ID)]
	if m == nil || m.Backup == "" || m.AnswerWithin <= 0 || m.Backup == m.ID || t.Members[m.Backup] == nil {
		return domain.Ref{}, 0, false
	}
	if esc != nil && slices.Contains(esc.Passed, m.Backup) {
		return domain.Ref{}, 0, false
	}
	return domain.Ref{Kind: domain.KindPerson, ID: string(m.Backup)}, m.AnswerWithin, true
}

// waitingSince is when r came to wait on its current approver (or the
// approver last answered it, allowing a shell stage): its stored
// revision's write, by the NATS server's clock, which a mirror replaying
// the bucket after a restart reads again; its creation when unknown.
func waitingSince(r kvstate.Record) time.Time {
	if r.Written.IsZero() {
		return r.CreatedAt
	}
	return r.Written
}

// backupDue is when a request of tenant, waiting on approver since
// (waitingSince) and last moved by esc, moves to its approver's backup:
// their answer_within after it came to wait on them, that is after its
// stored write or, if later, its last move (stamped by the deciders'
// clock, which the write's server clock may trail).
func backupDue(v *views.Views, tenant domain.TenantID, approver *domain.Ref, esc *domain.Escalation, since time.Time) (time.Time, bool) {
	_, within, ok := backupOf(v, tenant, approver, esc)
	if !ok {
		return time.Time{}, false
	}
	if esc != nil && esc.At.After(since) {
		since = esc.At
	}
	return since.Add(within), true
}
