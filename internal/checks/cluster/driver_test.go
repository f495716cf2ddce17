//go:build cluster

package cluster

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// The demo tenant's tokens: agt_sub works for agt_programmer, who works
// for agt_main, who works for person u-1.
const (
	tokPerson     = "dev-person"
	tokMain       = "dev-main"
	tokProgrammer = "dev-programmer"
	tokSub        = "dev-sub"
)

// kinds are the flows the load cycles through.
var kinds = []string{"grant", "read", "person", "deny", "expire", "race"}

// driver runs flows through the API processes, retrying what a fault
// interrupts, and keeps what it learns in a ledger.
type driver struct {
	l       *ledger
	clients []map[string]*client // per API process, per token
	patient time.Duration        // how long one call is retried
}

func newDriver(l *ledger, apiAddrs ...string) *driver {
	d := &driver{l: l, patient: 60 * time.Second}
	for _, addr := range apiAddrs {
		m := map[string]*client{}
		for _, tok := range []string{tokPerson, tokMain, tokProgrammer, tokSub} {
			m[tok] = newClient(addr, tok)
		}
		d.clients = append(d.clients, m)
	}
	return d
}

// as is token's client on a random API process.
func (d *driver) as(token string) *client { return d.clients[rand.IntN(len(d.clients))][token] }

// submit posts body with an Idempotency-Key, repeating it (same key) while
// the outcome is unknown; ok when acknowledged (201, or 200 for a repeat).
func (d *driver) submit(token string, body map[string]any) (record, bool) {
	key, start := fmt.Sprintf("k-%x", rand.Uint64()), time.Now()
	for time.Since(start) < d.patient {
		var r record
		code := d.as(token).do("POST", "/v1/requests", body, map[string]string{"Idempotency-Key": key}, &r)
		switch {
		case code == 201 || code == 200:
			d.l.acked(time.Since(start))
			d.l.observe(r)
			return r, true
		case retryable(code):
			d.l.retries.Add(1)
			time.Sleep(200 * time.Millisecond)
		default:
			d.l.problem("submit %v: status %d (%s)", body["tool"], code, r.Error)
			return r, false
		}
	}
	d.l.unacked.Add(1)
	return record{}, false
}

// answer answers id through API process api as token, repeating the same
// answer while the outcome is unknown (a repeat of an answer that took
// effect is 200, SPEC §5 rule 2). It returns 200 or 409 (or what else the
// server said).
func (d *driver) answer(api int, token, id string, expected uint64, decision string) (int, record) {
	return d.answerWith(api, token, id, map[string]any{"expected": expected, "decision": decision})
}

// answerWith is answer with the whole body given.
func (d *driver) answerWith(api int, token, id string, body map[string]any) (int, record) {
	start := time.Now()
	for time.Since(start) < d.patient {
		var r record
		code := d.clients[api][token].do("POST", "/v1/requests/"+id, body, nil, &r)
		if retryable(code) {
			d.l.retries.Add(1)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		switch code {
		case 200:
			d.l.answers200.Add(1)
			d.l.observe(r)
		case 409:
			d.l.answers409.Add(1)
		}
		return code, r
	}
	return 0, record{}
}

// sees waits until API process api shows id at revision rev or later, as
// a person does who answers with the revision their screen showed. Each
// API process reads from its own mirror of the requests bucket, so a write
// acknowledged by one is seen by the other a moment later (404 or an older
// revision until then); the ledger keeps the longest such lag.
func (d *driver) sees(api int, id string, rev uint64) bool {
	_, ok := d.shows(api, id, rev)
	return ok
}

// shows is sees returning the record that showed revision rev or later.
func (d *driver) shows(api int, id string, rev uint64) (record, bool) {
	start := time.Now()
	for time.Since(start) < d.patient {
		var r record
		code := d.clients[api][tokPerson].do("GET", "/v1/requests/"+id, nil, nil, &r)
		if code == 200 && r.Revision >= rev {
			d.l.lagged(time.Since(start))
			return r, true
		}
		if code != 200 && code != 404 && !retryable(code) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.l.problem("%s: api-%d did not show revision %d within %v", id, api+1, rev, d.patient)
	return record{}, false
}

// get reads id, retrying while the API cannot answer; wait long-polls.
func (d *driver) get(id, wait string) (record, bool) {
	start := time.Now()
	for time.Since(start) < d.patient {
		var r record
		code := d.as(tokPerson).do("GET", "/v1/requests/"+id+wait, nil, nil, &r)
		if code == 200 {
			d.l.observe(r)
			return r, true
		}
		if !retryable(code) {
			d.l.problem("get %s: status %d (%s)", id, code, r.Error)
			return r, false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return record{}, false
}

func (d *driver) flow(kind string, i int) {
	switch kind {
	case "grant": // decided in its submit by the grant setUp left
		d.decidedAtSubmit(kind, tokProgrammer, call("deploy_service", i, "5m"), "approved", "grant")
	case "read": // decided in its submit by the tenant's read rule
		d.decidedAtSubmit(kind, tokSub, call("read_ledger", i, "5m"), "approved", "read")
	case "person":
		d.personFlow(i)
	case "deny":
		d.denyFlow(i)
	case "expire":
		d.expireFlow(i)
	case "race":
		d.raceFlow(i)
	}
}

func (d *driver) decidedAtSubmit(kind, token string, body map[string]any, want, by string) {
	r, ok := d.submit(token, body)
	if !ok {
		return
	}
	d.l.add(&tracked{id: r.ID, kind: kind, want: want, wantBy: by})
	if r.Status != want || r.by() != by {
		d.l.problem("%s %s: submit answered %s by %q, want %s by %s", kind, r.ID, r.Status, r.by(), want, by)
	}
}

// pendingOnPerson submits as agt_programmer and has agt_main endorse it,
// so it waits on person u-1 at revision 1.
func (d *driver) pendingOnPerson(kind string, i int, want string) (string, bool) {
	r, ok := d.submit(tokProgrammer, call("issue_refund", i, "5m"))
	if !ok {
		return "", false
	}
	d.l.add(&tracked{id: r.ID, kind: kind, want: want, wantBy: "person"})
	api := rand.IntN(len(d.clients))
	if !d.sees(api, r.ID, 0) {
		return "", false
	}
	code, e := d.answer(api, tokMain, r.ID, 0, "allow")
	if code != 200 || e.Status != "pending" || e.Approver == nil || e.Approver.Kind != "person" || e.Revision != 1 {
		d.l.problem("%s %s: agt_main's endorsement: %d, %s at revision %d", kind, r.ID, code, e.Status, e.Revision)
		return "", false
	}
	return r.ID, true
}

func (d *driver) personFlow(i int) {
	id, ok := d.pendingOnPerson("person", i, "approved")
	if !ok {
		return
	}
	api := rand.IntN(len(d.clients))
	if !d.sees(api, id, 1) {
		return
	}
	if code, r := d.answer(api, tokPerson, id, 1, "allow"); code != 200 || r.Status != "approved" {
		d.l.problem("person %s: answer %d, %s", id, code, r.Status)
	}
}

func (d *driver) denyFlow(i int) {
	r, ok := d.submit(tokProgrammer, call("issue_refund", i, "5m"))
	if !ok {
		return
	}
	d.l.add(&tracked{id: r.ID, kind: "deny", want: "denied", wantBy: "agent"})
	api := rand.IntN(len(d.clients))
	if !d.sees(api, r.ID, 0) {
		return
	}
	if code, e := d.answer(api, tokMain, r.ID, 0, "deny"); code != 200 || e.Status != "denied" {
		d.l.problem("deny %s: answer %d, %s", r.ID, code, e.Status)
	}
}

// expireFlow submits with a 2s timeout that nobody answers; the final
// check waits for its expiry.
func (d *driver) expireFlow(i int) {
	if r, ok := d.submit(tokSub, call("issue_refund", i, "2s")); ok {
		d.l.add(&tracked{id: r.ID, kind: "expire", want: "expired", wantBy: "deadline"})
	}
}

// raceFlow answers allow and deny at the same revision at once, through
// both API processes: exactly one is 200 and decides; the other is 409.
func (d *driver) raceFlow(i int) {
	id, ok := d.pendingOnPerson("race", i, "")
	if !ok || !d.sees(0, id, 1) || !d.sees(1, id, 1) {
		return
	}
	var wg sync.WaitGroup
	codes, recs := [2]int{}, [2]record{}
	decisions := [2]string{"allow", "deny"}
	for api := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); codes[api], recs[api] = d.answer(api, tokPerson, id, 1, decisions[api]) }()
	}
	wg.Wait()
	winner := -1
	for k := range 2 {
		if codes[k] == 200 && codes[1-k] == 409 && recs[1-k].Error == "RequestConflict" {
			winner = k
		}
	}
	if winner < 0 {
		d.l.problem("race %s: answers %v (%s, %s), want one 200 and one 409 RequestConflict", id, codes, recs[0].Error, recs[1].Error)
		return
	}
	d.l.settle(id, map[string]string{"allow": "approved", "deny": "denied"}[decisions[winner]], "person")
	if recs[winner].Status != d.l.want(id) {
		d.l.problem("race %s: the 200 answer shows %s", id, recs[winner].Status)
	}
}
