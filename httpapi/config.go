package httpapi

import (
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/config"
)

// ConfigStatus is the running config revision (SPEC §10 "Changing the
// config without a restart"); zero when the process runs no config file.
type ConfigStatus struct {
	Revision  uint64    `json:"revision"`
	SHA256    string    `json:"sha256"`
	AppliedAt time.Time `json:"applied_at"`
}

// configView is GET /v1/config's answer: the running revision and the
// caller's tenant in it, never a token.
type configView struct {
	Revision  uint64         `json:"revision"`
	SHA256    string         `json:"sha256"`
	AppliedAt *time.Time     `json:"applied_at"` // null: no revision
	Tenant    config.Outline `json:"tenant"`
}

func (a *API) runningConfig(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpConfig)
	if err != nil {
		return err
	}
	var st ConfigStatus
	if a.configStatus != nil {
		st = a.configStatus()
	}
	v := configView{Revision: st.Revision, SHA256: st.SHA256, Tenant: config.OutlineOf(c.Tenant)}
	if !st.AppliedAt.IsZero() {
		v.AppliedAt = &st.AppliedAt
	}
	return writeJSON(w, http.StatusOK, v)
}
