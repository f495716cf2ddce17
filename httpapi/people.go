package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
)

// people answers GET /v1/people: the caller ("you", with their name when
// they are a person) and the tenant's members with their names, so that a
// surface can name the people in the records it shows (SPEC §10 "People
// by name").
func (a *API) people(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpPeople)
	if err != nil {
		return err
	}
	you := map[string]any{"kind": c.Principal.Kind, "id": c.Principal.ID}
	if c.Principal.Kind == domain.KindPerson {
		if n := a.svc.PersonName(c.Tenant.ID, domain.MemberID(c.Principal.ID)); n != "" {
			you["name"] = n
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": c.Tenant.ID, "you": you, "items": a.svc.People(c)})
}
