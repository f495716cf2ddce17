package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// registered is the answer of POST /v1/agents; the token is shown once.
type registered struct {
	Agent events.Agent `json:"agent"`
	Token string       `json:"token"`
}

func (a *API) registerAgent(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpRegisterAgent)
	if err != nil {
		return err
	}
	var in approvals.RegisterInput
	if err := readOptionalBody(r, &in); err != nil {
		return err
	}
	agent, token, err := a.svc.RegisterAgent(r.Context(), c, in)
	if err != nil {
		return err
	}
	agent.TokenSHA256 = ""
	return writeJSON(w, http.StatusCreated, registered{Agent: agent, Token: token})
}

// retireAgent serves DELETE /v1/agents/{id}: 200 with the retired agent.
func (a *API) retireAgent(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpRetireAgent)
	if err != nil {
		return err
	}
	agent, err := a.svc.RetireAgent(r.Context(), c, events.AgentID(r.PathValue("id")))
	if err != nil {
		return err
	}
	agent.TokenSHA256 = ""
	return writeJSON(w, http.StatusOK, agent)
}

func (a *API) listRules(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpRules)
	if err != nil {
		return err
	}
	rules, err := a.svc.ListRules(r.Context(), c, events.AgentID(r.PathValue("id")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"items": rules})
}

func (a *API) addRule(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpWriteRules)
	if err != nil {
		return err
	}
	var in approvals.RuleInput
	if _, err := readBody(r, &in); err != nil {
		return err
	}
	rule, err := a.svc.AddRule(r.Context(), c, events.AgentID(r.PathValue("id")), in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, rule)
}

func (a *API) deleteRule(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpWriteRules)
	if err != nil {
		return err
	}
	err = a.svc.DeleteRule(r.Context(), c, events.AgentID(r.PathValue("id")), events.RuleID(r.PathValue("rule_id")))
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
