package approvals_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// The endpoints, against the table: who may (Permit) comes before the
// body is read, the body is strict, a name is given once (path or body),
// and what they answer is the use case's.
func TestEndpoints(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pending := f.submit(t, "")
	body := func(s string) func() ([]byte, error) {
		return func() ([]byte, error) { return []byte(s), nil }
	}
	unread := func() ([]byte, error) {
		t.Error("the body was read before the caller was permitted")
		return nil, nil
	}
	id := map[string]string{"id": string(pending.ID)}
	for _, tc := range []struct {
		name   string
		op     approvals.Op
		c      approvals.Caller
		in     approvals.Input
		status int    // the result's, or the refusal's
		field  string // the refusal's field
	}{
		{"agent submits", approvals.OpSubmit, f.agent, approvals.Input{Body: body(`{"tool":"deploy","arguments":{}}`)}, http.StatusCreated, ""},
		{"person submits", approvals.OpSubmit, f.person, approvals.Input{Body: unread}, http.StatusForbidden, ""},
		{"person registers a subagent", approvals.OpRegisterAgent, f.person, approvals.Input{Body: unread}, http.StatusForbidden, ""},
		{"agent answers without approvals:write", approvals.OpAnswer, f.agent, approvals.Input{Path: id, Body: unread}, http.StatusForbidden, ""},
		{"an unknown field", approvals.OpSubmit, f.agent, approvals.Input{Body: body(`{"tool":"deploy","arguments":{},"Tool":"x"}`)}, http.StatusBadRequest, "Tool"},
		{"id in the path and the body", approvals.OpAnswer, f.person, approvals.Input{Path: id,
			Body: body(`{"id":"` + string(pending.ID) + `","expected":1,"decision":"allow"}`)}, http.StatusBadRequest, "id"},
		{"no id", approvals.OpAnswer, f.person, approvals.Input{Body: body(`{"expected":1,"decision":"allow"}`)}, http.StatusBadRequest, "id"},
		{"get by the path", approvals.OpGet, f.person, approvals.Input{Path: id}, http.StatusOK, ""},
		{"get by the body", approvals.OpGet, f.person, approvals.Input{Body: body(`{"id":"` + string(pending.ID) + `"}`)}, http.StatusOK, ""},
		{"get with a bad wait", approvals.OpGet, f.person, approvals.Input{Path: id,
			Query: func() (map[string]string, error) { return map[string]string{"wait": "soon"}, nil }}, http.StatusBadRequest, "wait"},
		{"list with a bad limit", approvals.OpList, f.person, approvals.Input{Body: body(`{"limit":0}`)}, http.StatusBadRequest, "limit"},
		{"cancel an id and a turn", approvals.OpCancel, f.agent, approvals.Input{Body: body(`{"id":"x","turn":"t"}`)}, http.StatusBadRequest, "turn"},
		{"a stream has no endpoint", approvals.OpEvents, f.person, approvals.Input{Body: unread}, http.StatusForbidden, ""},
		{"an unknown operation", approvals.Op("nope"), f.person, approvals.Input{Body: unread}, http.StatusForbidden, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.svc.Endpoint(tc.op)(ctx, tc.c, tc.in)
			got, field := res.Status, ""
			if err != nil {
				p := problem.From(err)
				got, field = p.Status, p.Field
			}
			if got != tc.status || field != tc.field {
				t.Errorf("status %d field %q (%v), want %d %q", got, field, err, tc.status, tc.field)
			}
		})
	}
}

// A person's refused submit stores nothing: the use case never ran.
func TestEndpointRefusalChangesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.svc.Endpoint(approvals.OpSubmit)(ctx, f.person, approvals.Input{
		Body: func() ([]byte, error) { return []byte(`{"tool":"deploy","arguments":{}}`), nil }})
	if !errors.Is(err, approvals.ErrForbidden) {
		t.Fatalf("a person's submit: %v, want ErrForbidden", err)
	}
	items, _, err := f.svc.List(ctx, f.person, approvals.ListFilter{Statuses: []domain.Status{domain.StatusPending}, Limit: 10})
	if err != nil || len(items) != 0 {
		t.Fatalf("after a refused submit: %d requests (%v), want none", len(items), err)
	}
}
