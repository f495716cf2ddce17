package approvals

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
	"golang.org/x/sync/errgroup"
)

// Get returns a request the caller may see; ErrNotFound otherwise.
func (s *Service) Get(ctx context.Context, c Caller, id domain.RequestID) (kvstate.Record, error) {
	return s.record(ctx, c, id)
}

// Wait returns the request as soon as it is terminal, or as it is when wait
// elapses (capped at wire.MaxWait). It never creates or extends anything. A
// wait whose caller stops authenticating meanwhile (Hold) ends with the
// 401 ErrUnauthenticated.
//
// A held wait must cost little: it reads the record from the request
// mirror (this process's own writes are in it at once; another process's
// arrive through the watcher, which also wakes the hub, so subscribing
// first makes a lagging mirror safe); any deeper read runs on a
// short-lived goroutine; and records travel by pointer, so the waiting
// goroutine's stack stays at its smallest.
func (s *Service) Wait(ctx context.Context, c Caller, id domain.RequestID, wait time.Duration) (*kvstate.Record, error) {
	wait = min(wait, wire.MaxWait)
	key := kvstate.RequestKey(c.Tenant.ID, id)
	ch, cancel, err := s.hub.Subscribe(key)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rec, err := s.current(ctx, c, id, key)
	if err != nil || rec.Status.Terminal() || wait <= 0 {
		return rec, err
	}
	ctx, release := s.Hold(ctx, c)
	defer release()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case got, ok := <-ch:
		if ok && got.KVRevision >= rec.KVRevision {
			return got, nil
		}
	case <-timer.C:
	case <-ctx.Done():
		return rec, heldErr(ctx)
	}
	return s.current(ctx, c, id, key)
}

// current returns the request from the mirror, or reads it from the store
// on another goroutine when the mirror does not hold it yet.
func (s *Service) current(ctx context.Context, c Caller, id domain.RequestID, key string) (*kvstate.Record, error) {
	if rec, ok := s.views.Requests().GetPtr(key); ok && !rec.Partial() { // a partial one is read whole below
		if !s.visible(c, &rec.Request) {
			return nil, ErrNotFound
		}
		return rec, nil
	}
	type result struct {
		rec *kvstate.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := s.record(ctx, c, id)
		done <- result{&rec, err}
	}()
	r := <-done
	return r.rec, r.err
}

// ListFilter selects and pages an inbox.
type ListFilter struct {
	Statuses []domain.Status
	Agent    domain.AgentID
	Limit    int
	Cursor   string
}

// ParseListFilter validates the query of GET /v1/requests.
func ParseListFilter(status, agent, limit, cursor string) (ListFilter, error) {
	f := ListFilter{Agent: domain.AgentID(agent), Cursor: cursor}
	for _, st := range strings.Split(status, ",") {
		if st = strings.TrimSpace(st); st == "" {
			continue
		}
		if !domain.ValidStatus(st) {
			return f, invalid("status", "unknown status %q", st)
		}
		f.Statuses = append(f.Statuses, domain.Status(st))
	}
	n, err := parseLimit(limit)
	f.Limit = n
	if err == nil && cursor != "" {
		_, err = wire.CursorID(cursor)
	}
	return f, err
}

func parseLimit(s string) (int, error) {
	if s == "" {
		return 50, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 500 {
		return 0, invalid("limit", "limit must be 1..500")
	}
	return n, nil
}

// List returns the caller's inbox: requests waiting for the caller and
// those the caller answered or endorsed (admin: all of the tenant's),
// oldest first, and the cursor of the next page ("" at the end). It walks
// the mirror's sorted index from the cursor; pending requests come from
// memory, and so do terminal ones (held packed); any the mirror does not
// hold at the revision it indexed come from the bucket, read in parallel.
// A request removed meanwhile is left out of the page. Errors:
// ErrUnavailable.
func (s *Service) List(ctx context.Context, c Caller, f ListFilter) ([]domain.Request, string, error) {
	tenant := c.Tenant.ID
	after, _ := wire.CursorID(f.Cursor)
	scopes := inboxScopes(c)
	pendingOnly := len(f.Statuses) > 0 && !slices.ContainsFunc(f.Statuses, domain.Status.Terminal)
	if pendingOnly { // a short walk, whatever the inbox's history
		scopes = []views.RequestScope{views.PendingScope(tenant)}
	}
	type hit struct {
		req   domain.Request
		kvRev uint64 // a request still to read (req holds its id)
	}
	scan := func(scope views.RequestScope, yield func(string, hit) bool) {
		s.views.ScanRequests(tenant, scope, after, func(id domain.RequestID, sum views.Summary, kvRev uint64, r *kvstate.Record) bool {
			if r == nil {
				if !f.matchSummary(sum) {
					return true
				}
				return yield(string(id), hit{req: domain.Request{ID: id}, kvRev: kvRev})
			}
			if !f.match(&r.Request) || (pendingOnly && !c.Admin() && !s.views.InInbox(r, c.Principal)) {
				return true
			}
			if r.Partial() { // held without its arguments: read at kvRev
				return yield(string(id), hit{req: domain.Request{ID: id}, kvRev: kvRev})
			}
			return yield(string(id), hit{req: r.Request})
		})
	}
	hits, next := pageOf(f.Limit, func(yield func(string, hit) bool) {
		if len(scopes) == 1 {
			scan(scopes[0], yield)
			return
		}
		// A person in groups: each scope's first limit+1 matches, merged
		// in id order, hold the page's (a request in two scopes once).
		type idHit struct {
			id string
			h  hit
		}
		var all []idHit
		for _, sc := range scopes {
			n := 0
			scan(sc, func(id string, h hit) bool {
				all, n = append(all, idHit{id, h}), n+1
				return n <= f.Limit
			})
		}
		slices.SortStableFunc(all, func(a, b idHit) int { return strings.Compare(a.id, b.id) })
		for i, x := range all {
			if (i == 0 || all[i-1].id != x.id) && !yield(x.id, x.h) {
				return
			}
		}
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listReaders)
	gone := make([]bool, len(hits))
	for i := range hits {
		if hits[i].kvRev == 0 {
			continue
		}
		if r, ok := s.views.HeldRequest(tenant, hits[i].req.ID, hits[i].kvRev); ok {
			hits[i].req = r
			continue
		}
		g.Go(func() error {
			rec, err := s.store.RequestAt(gctx, tenant, hits[i].req.ID, hits[i].kvRev)
			if errors.Is(err, kvstate.ErrNotFound) {
				gone[i] = true
				return nil
			}
			hits[i].req = rec.Request
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", stateErr(err, ErrUnavailable)
	}
	items := make([]domain.Request, 0, len(hits))
	for i, h := range hits {
		if !gone[i] {
			items = append(items, h.req)
		}
	}
	return items, next, nil
}

// inboxScopes are the request scopes of c's inbox: admin, the tenant's;
// a person, their own and each group they are a member of (SPEC §12: a
// group's request is in the inbox of every member), as the tenant's
// config says now.
func inboxScopes(c Caller) []views.RequestScope {
	tenant := c.Tenant.ID
	if c.Admin() {
		return []views.RequestScope{views.TenantScope(tenant)}
	}
	out := []views.RequestScope{views.InboxScope(tenant, c.Principal)}
	if c.Principal.Kind != domain.KindPerson {
		return out
	}
	for id, g := range c.Tenant.Groups {
		if slices.Contains(g.Members, domain.MemberID(c.Principal.ID)) {
			out = append(out, views.InboxScope(tenant, domain.Ref{Kind: domain.KindGroup, ID: string(id)}))
		}
	}
	return out
}

// listReaders bounds the parallel reads of one page's terminal requests.
const listReaders = 16

// pageOf collects one page from walk, which calls yield with the items in
// id order from after the cursor until yield returns false: at most limit
// items, and the cursor after the last when more follow ("" at the end).
// Requests and grants page alike.
func pageOf[T any](limit int, walk func(yield func(id string, item T) bool)) ([]T, string) {
	items := make([]T, 0, min(limit, 64))
	var last string
	more := false
	walk(func(id string, item T) bool {
		if len(items) == limit {
			more = true
			return false
		}
		items, last = append(items, item), id
		return true
	})
	if !more {
		return items, ""
	}
	return items, wire.CursorAfter(last)
}

// matchSummary is match for a request held as its summary.
func (f *ListFilter) matchSummary(s views.Summary) bool {
	return (f.Agent == "" || s.Agent == string(f.Agent)) &&
		(len(f.Statuses) == 0 || slices.Contains(f.Statuses, domain.Status(s.Status)))
}

func (f *ListFilter) match(r *domain.Request) bool {
	if f.Agent != "" && r.Agent != f.Agent {
		return false
	}
	if len(f.Statuses) == 0 {
		return true
	}
	for _, st := range f.Statuses {
		if r.Status == st {
			return true
		}
	}
	return false
}
