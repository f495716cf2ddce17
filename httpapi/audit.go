package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/audit"
)

// AuditConfig serves the audit log (SPEC §14) under scope admin.
type AuditConfig struct {
	Log    *audit.Log
	Signer *audit.Signer
}

func (a *API) auditRoutes(cfg *AuditConfig) {
	if cfg == nil {
		return
	}
	s := auditServer{a: a, cfg: cfg}
	a.handle("GET /v1/audit", s.entries)
	a.handle("GET /v1/audit/checkpoint", s.checkpoint)
	a.handle("GET /v1/audit/key", s.key)
	a.handle("GET /v1/audit/proof", s.proof)
	a.handle("POST /v1/policy/replay", s.replay)
}

type auditServer struct {
	a   *API
	cfg *AuditConfig
}

// entries streams the caller's tenant's entries as JSON Lines.
func (s auditServer) entries(w http.ResponseWriter, r *http.Request) error {
	c, err := s.a.admit(r, approvals.OpAudit)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	rg, err := audit.ParseRange(q.Get("after"), q.Get("until"))
	if err != nil {
		return err
	}
	started := false
	rc := http.NewResponseController(w)
	err = s.cfg.Log.Entries(r.Context(), c.Tenant.ID, rg.After, rg.Until, func(line []byte) error {
		if !started {
			w.Header().Set("Content-Type", "application/jsonl")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
		return rc.Flush()
	})
	switch {
	case err != nil && started:
		s.a.log.Warn("audit: export cut short", "tenant", c.Tenant.ID, "err", err)
		return nil // the client sees a line cut short or missing: verify says so
	case err != nil:
		return audit.ErrUnavailable.Wrap(err)
	case !started:
		w.Header().Set("Content-Type", "application/jsonl")
		w.WriteHeader(http.StatusOK)
	}
	return nil
}

func (s auditServer) checkpoint(w http.ResponseWriter, r *http.Request) error {
	c, err := s.a.admit(r, approvals.OpAudit)
	if err != nil {
		return err
	}
	note, err := s.cfg.Log.Checkpoint(r.Context(), c.Tenant.ID, s.cfg.Signer)
	if err != nil {
		return audit.ErrUnavailable.Wrap(err)
	}
	return writeText(w, note)
}

func (s auditServer) key(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.a.admit(r, approvals.OpAudit); err != nil {
		return err
	}
	return writeText(w, []byte(s.cfg.Signer.VerifierKey()+"\n"))
}

func (s auditServer) proof(w http.ResponseWriter, r *http.Request) error {
	c, err := s.a.admit(r, approvals.OpAudit)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	pq, err := audit.ParseProof(q.Get("old"), q.Get("entry"), q.Get("size"))
	if err != nil {
		return err
	}
	p, err := s.cfg.Log.Prove(r.Context(), c.Tenant.ID, pq)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

func writeText(w http.ResponseWriter, b []byte) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}
