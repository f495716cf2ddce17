package signin

import (
	"errors"
	"testing"
)

// The claim must be present, and an email signs someone in only when the
// provider says email_verified: true (absent or false is refused).
func TestClaimRules(t *testing.T) {
	p, err := NewProvider(Config{Issuer: "https://idp.example.com", ClientID: "c", RedirectURL: "https://cs.example.com/cb"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"verified", map[string]any{"email": "ada@example.com", "email_verified": true}, true},
		{"not said", map[string]any{"email": "ada@example.com"}, false},
		{"said as a string", map[string]any{"email": "ada@example.com", "email_verified": "true"}, false},
		{"unverified", map[string]any{"email": "ada@example.com", "email_verified": false}, false},
		{"missing", map[string]any{"name": "Ada"}, false},
		{"blank", map[string]any{"email": " "}, false},
		{"not a string", map[string]any{"email": 7}, false},
	}
	for _, c := range cases {
		id, err := p.claim("sub-1", c.claims)
		if c.ok && (err != nil || id.Value != "ada@example.com" || id.Subject != "sub-1") {
			t.Errorf("%s: %+v %v, want ada@example.com", c.name, id, err)
		}
		if !c.ok && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %+v %v, want ErrRefused", c.name, id, err)
		}
	}
}
