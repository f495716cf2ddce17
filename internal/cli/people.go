package cli

import (
	"context"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// people is what GET /v1/people says (SPEC §10 "People by name"): the
// caller, and the tenant's members' names by id. The zero value (the
// server did not say, or the token may not ask) names nobody: ids are
// shown alone.
type people struct {
	you   domain.Ref
	names map[string]string
}

// peopleAnswer is the body of GET /v1/people.
type peopleAnswer struct {
	You   domain.Ref `json:"you"`
	Items []struct {
		ID   string `json:"id"`
		Name string `json:"name,omitempty"`
	} `json:"items"`
}

// people reads GET /v1/people once per client. A refusal or an older
// server leaves every person named by id: names help, they never block
// an answer.
func (c *Client) people(ctx context.Context) people {
	c.peopleOnce.Do(func() {
		var p peopleAnswer
		if _, err := c.get(ctx, "/v1/people", &p); err != nil {
			return
		}
		c.known = people{you: p.You, names: map[string]string{}}
		for _, it := range p.Items {
			if it.Name != "" {
				c.known.names[it.ID] = it.Name
			}
		}
	})
	return c.known
}

// ref names who or what r is: a person by name with the id beside it,
// "Ada Lovelace (u-1)" (display.Person), else "person:u-1"; anything else
// as kind:id.
func (p people) ref(r *domain.Ref) string {
	if r == nil || r.Kind == "" {
		return "-"
	}
	if r.Kind == domain.KindPerson {
		if n := p.names[r.ID]; n != "" {
			return display.Person(text(n, 80), text(r.ID, 80))
		}
	}
	if r.ID == "" {
		return text(r.Kind, 64)
	}
	return text(r.Kind+":"+r.ID, 80)
}

// isYou: r is the caller.
func (p people) isYou(r *domain.Ref) bool {
	return r != nil && p.you.Kind != "" && r.Kind == p.you.Kind && r.ID == p.you.ID
}

// waitsFor is who a pending request waits for, "you" when it is the
// caller.
func (p people) waitsFor(r *domain.Ref) string {
	if p.isYou(r) {
		return "you"
	}
	return p.ref(r)
}
