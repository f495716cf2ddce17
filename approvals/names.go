package approvals

import (
	"sort"
	"sync"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// names are the names people's ID tokens gave at sign-in, for members
// whose config gives none (SPEC §10 "People by name"). They are kept by
// the process that signed the person in, until it stops; the config's
// name is what every process knows.
type names struct{ m sync.Map } // tenant/member → string

// LearnName keeps the ID token's name of a member who signed in ("" is
// ignored). A configured name still wins.
func (s *Service) LearnName(tenant domain.TenantID, m domain.MemberID, name string) {
	if name != "" {
		s.names.m.Store(string(tenant)+"/"+string(m), name)
	}
}

// PersonName is the member's name: the config's, else the one their ID
// token gave at sign-in, else "".
func (s *Service) PersonName(tenant domain.TenantID, m domain.MemberID) string {
	if t, ok := s.views.Tenant(tenant); ok {
		if mem := t.Members[m]; mem != nil && mem.Name != "" {
			return mem.Name
		}
	}
	if n, ok := s.names.m.Load(string(tenant) + "/" + string(m)); ok {
		return n.(string)
	}
	return ""
}

// RefText is how a principal is named to people: a person by name with
// the id beside it ("Ada Lovelace (u-1)"), others as kind and id ("agent
// a-1", "group finance").
func (s *Service) RefText(tenant domain.TenantID, r domain.Ref) string {
	if r.Kind == domain.KindPerson {
		return "person " + display.Person(s.PersonName(tenant, domain.MemberID(r.ID)), r.ID)
	}
	return string(r.Kind) + " " + r.ID
}

// Person is one member as GET /v1/people lists them.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// People lists the members of the caller's tenant, by id, with their
// names: what surfaces need to name the people in the records they show
// (OpPeople).
func (s *Service) People(c Caller) []Person {
	out := make([]Person, 0, len(c.Tenant.Members))
	for id := range c.Tenant.Members {
		out = append(out, Person{ID: string(id), Name: s.PersonName(c.Tenant.ID, id)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
