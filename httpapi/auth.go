package httpapi

import (
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals"
)

// caller authenticates r through approvals.Authenticate, with sign-in's
// sessions as its hook: the bearer token, else (sign-in configured) the
// session whose token the header holds or whose cookie r carries.
func (a *API) caller(r *http.Request) (approvals.Caller, error) {
	return a.svc.Authenticate(r.Header.Get("Authorization"), a.sessions(r))
}

// sessions is r's session hook (nil without sign-in).
func (a *API) sessions(r *http.Request) approvals.Sessions {
	if a.signIn == nil {
		return nil
	}
	return func() (approvals.Caller, error) { return a.sessionCaller(r) }
}

// admit authenticates r (401) and checks that its caller may run op
// (403): approvals.Admit, for the operations HTTP serves itself (event
// streams, the audit log, the config, people).
func (a *API) admit(r *http.Request, op approvals.Op) (approvals.Caller, error) {
	return a.svc.Admit(r.Header.Get("Authorization"), op, a.sessions(r))
}

// binding fills in what HTTP's wire adds to an endpoint's input: the
// path's values, a GET's query.
type binding func(w http.ResponseWriter, r *http.Request, in approvals.Input) approvals.Input

// endpoint binds op's endpoint (approvals.Service.Endpoint: Permit, the
// strict decode, the use case) to a route: it authenticates, hands over
// the body (read after Permit), the headers and bind's values, and
// writes the result.
func (a *API) endpoint(op approvals.Op, bind binding) handler {
	run := a.svc.Endpoint(op)
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := a.caller(r)
		if err != nil {
			return err
		}
		in := approvals.Input{Body: func() ([]byte, error) { return readRaw(r) }, Header: r.Header.Get}
		if bind != nil {
			in = bind(w, r, in)
		}
		res, err := run(r.Context(), c, in)
		if err != nil {
			return err
		}
		return writeResult(w, &res)
	}
}

// writeResult writes an endpoint's result: a record as stored, a body
// encoded, or no body (204).
func writeResult(w http.ResponseWriter, res *approvals.Result) error {
	switch {
	case res.IsRecord:
		return writeRecord(w, res.Status, &res.Record)
	case res.Status == http.StatusNoContent:
		w.WriteHeader(res.Status)
		return nil
	}
	return writeJSON(w, res.Status, res.Body)
}

// path binds the path values names to the input's names of the same.
func path(names ...string) binding {
	return func(_ http.ResponseWriter, r *http.Request, in approvals.Input) approvals.Input {
		in.Path = make(map[string]string, len(names))
		for _, n := range names {
			in.Path[n] = r.PathValue(n)
		}
		return in
	}
}

// read binds a GET: the path's values, the query in place of a body.
func read(names ...string) binding {
	p := path(names...)
	return func(w http.ResponseWriter, r *http.Request, in approvals.Input) approvals.Input {
		in = p(w, r, in)
		in.Body = nil
		in.Query = func() (map[string]string, error) { return queryMap(r) }
		return in
	}
}

// queryMap is r's query (query) as one value per name.
func queryMap(r *http.Request) (map[string]string, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(q))
	for k := range q {
		m[k] = q.Get(k)
	}
	return m, nil
}

// longPoll binds GET /v1/requests/{id}: read's, and a wait moves the
// response's write deadline past it (the server's write timeout after).
func (a *API) longPoll() binding {
	byID := read("id")
	return func(w http.ResponseWriter, r *http.Request, in approvals.Input) approvals.Input {
		in = byID(w, r, in)
		in.Hold = func(wait time.Duration) {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + a.timeouts.Write))
		}
		return in
	}
}
