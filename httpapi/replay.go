package httpapi

import (
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// replayBody is POST /v1/policy/replay's body (SPEC §16). Tenant, when
// given, must be the caller's: a token reads its own tenant's log only.
type replayBody struct {
	Config string `json:"config"`
	Since  string `json:"since,omitempty"`
	Tenant string `json:"tenant,omitempty"`
}

// replay runs a candidate config over the caller's tenant's audit log and
// answers with the report. It writes nothing.
func (s auditServer) replay(w http.ResponseWriter, r *http.Request) error {
	c, err := s.a.admit(r, approvals.OpAudit)
	if err != nil {
		return err
	}
	var body replayBody
	if _, err := readBody(r, &body); err != nil {
		return err
	}
	if body.Tenant != "" && body.Tenant != string(c.Tenant.ID) {
		return problem.Invalid("tenant", "a token replays its own tenant's log only ("+string(c.Tenant.ID)+")")
	}
	in, err := replay.Candidate([]byte(body.Config), c.Tenant.ID, body.Since, s.a.svc.Now())
	if err != nil {
		return err
	}
	in.Running = c.Tenant
	rep, err := replay.Run(r.Context(), in, s.source(r, c.Tenant.ID))
	if err != nil {
		return approvals.ErrUnavailable.Wrap(err)
	}
	return writeJSON(w, http.StatusOK, rep)
}

// source reads tenant's whole audit log.
func (s auditServer) source(r *http.Request, tenant domain.TenantID) replay.Source {
	return func(fn func([]byte) error) error {
		return s.cfg.Log.Entries(r.Context(), tenant, 0, time.Time{}, fn)
	}
}
