package httpapi

import (
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

func (a *API) submit(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpSubmit)
	if err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	var in approvals.SubmitInput
	digest, err := readBody(r, &in)
	if err != nil {
		return err
	}
	rec, created, err := a.svc.Submit(approvals.WithTraceparent(r.Context(), r.Header.Get("traceparent")), c, in, key, digest)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeRecord(w, status, &rec)
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpGet)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	wait, err := approvals.ParseWait(q.Get("wait"))
	if err != nil {
		return err
	}
	id := events.RequestID(r.PathValue("id"))
	if wait <= 0 {
		rec, err := a.svc.Get(r.Context(), c, id)
		if err != nil {
			return err
		}
		return writeRecord(w, http.StatusOK, &rec)
	}
	return a.wait(w, r, c, id, wait)
}

// wait is the long-poll; it keeps only pointers on its stack while it
// waits (see approvals.Service.Wait). Its write deadline is the server's
// write timeout past the wait.
func (a *API) wait(w http.ResponseWriter, r *http.Request, c approvals.Caller, id events.RequestID, wait time.Duration) error {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + a.timeouts.Write))
	rec, err := a.svc.Wait(r.Context(), c, id, wait)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, rec)
}

func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpList)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	f, err := approvals.ParseListFilter(q.Get("status"), q.Get("agent"), q.Get("limit"), q.Get("cursor"))
	if err != nil {
		return err
	}
	items, next, err := a.svc.List(r.Context(), c, f)
	if err != nil {
		return err
	}
	p, err := approvals.RequestPage(items, next)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

func (a *API) answer(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpAnswer)
	if err != nil {
		return err
	}
	var in approvals.AnswerInput
	if _, err := readBody(r, &in); err != nil {
		return err
	}
	rec, err := a.svc.Answer(r.Context(), c, events.RequestID(r.PathValue("id")), in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, &rec)
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpCancel)
	if err != nil {
		return err
	}
	var none struct{}
	if err := readOptionalBody(r, &none); err != nil {
		return err
	}
	rec, err := a.svc.Cancel(r.Context(), c, events.RequestID(r.PathValue("id")))
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, &rec)
}

// cancelTurn is POST /v1/turns/{turn}/cancel: the harness interrupted the
// caller's turn, so none of its requests may wait on (SPEC §5).
func (a *API) cancelTurn(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpCancel)
	if err != nil {
		return err
	}
	var none struct{}
	if err := readOptionalBody(r, &none); err != nil {
		return err
	}
	ids, err := a.svc.CancelTurn(r.Context(), c, r.PathValue("turn"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, approvals.TurnCancelled{Cancelled: ids})
}

// claimInput is the body of POST /v1/requests/{id}/claim.
type claimInput struct {
	CallDigest string `json:"call_digest"`
}

func (a *API) claim(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpClaim)
	if err != nil {
		return err
	}
	var in claimInput
	if _, err := readBody(r, &in); err != nil {
		return err
	}
	rec, err := a.svc.Claim(r.Context(), c, events.RequestID(r.PathValue("id")), in.CallDigest)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, &rec)
}
