package signin

import (
	"errors"
	"strings"
	"testing"
)

// With a claim other than email, the claim alone names the person:
// email_verified is not asked for; it must still be a non-blank string.
func TestClaimOtherThanEmail(t *testing.T) {
	p, err := NewProvider(Config{Issuer: "https://idp.example.com", ClientID: "c", RedirectURL: "https://cs.example.com/cb", Claim: "preferred_username"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"present", map[string]any{"preferred_username": "ada"}, true},
		{"present, email unverified", map[string]any{"preferred_username": "ada", "email": "x@example.com", "email_verified": false}, true},
		{"only an email", map[string]any{"email": "ada@example.com", "email_verified": true}, false},
		{"blank", map[string]any{"preferred_username": "\t "}, false},
		{"a list", map[string]any{"preferred_username": []any{"ada"}}, false},
	} {
		id, err := p.claim("sub-1", tc.claims)
		switch {
		case tc.ok && (err != nil || id.Value != "ada" || id.Subject != "sub-1"):
			t.Errorf("%s: %+v %v, want ada", tc.name, id, err)
		case !tc.ok && !errors.Is(err, ErrRefused):
			t.Errorf("%s: %+v %v, want ErrRefused", tc.name, id, err)
		}
	}
}

// An unverified email is ErrUnverified (a kind of ErrRefused), and the
// identity it returns carries no name.
func TestClaimUnverifiedIsItsOwnRefusal(t *testing.T) {
	p, err := NewProvider(Config{Issuer: "https://idp.example.com", ClientID: "c", RedirectURL: "https://cs.example.com/cb"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.claim("sub-1", map[string]any{"email": "ada@example.com", "email_verified": false, "name": "Ada"})
	if !errors.Is(err, ErrUnverified) || !errors.Is(err, ErrRefused) || id.Name != "" {
		t.Errorf("unverified: %+v %v, want ErrUnverified and no name", id, err)
	}
	id, err = p.claim("sub-1", map[string]any{"email": "ada@example.com", "email_verified": true, "name": "  Ada Lovelace "})
	if err != nil || id.Name != "Ada Lovelace" {
		t.Errorf("verified: %+v %v, want the name trimmed", id, err)
	}
}

// The name claim only names: it is trimmed, and dropped ("") when absent,
// not a string, over 128 characters, not UTF-8, or holding a control or
// format character (which could hide or reorder what an approver reads).
func TestNameClaim(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"plain", "Ada Lovelace", "Ada Lovelace"},
		{"trimmed", "  Ada Lovelace\n", "Ada Lovelace"},
		{"not latin", "Ада Лавлейс", "Ада Лавлейс"},
		{"128 characters", strings.Repeat("é", 128), strings.Repeat("é", 128)},
		{"129 characters", strings.Repeat("é", 129), ""},
		{"absent", nil, ""},
		{"a number", 7, ""},
		{"blank", "   ", ""},
		{"a control character", "Ada\x07Lovelace", ""},
		{"a newline inside", "Ada\nLovelace", ""},
		{"a right-to-left override", "Ada \u202eecalevoL", ""},
		{"a zero-width joiner", "Ada\u200dLovelace", ""},
		{"not UTF-8", "Ada \xff", ""},
	} {
		claims := map[string]any{}
		if tc.v != nil {
			claims["name"] = tc.v
		}
		if got := nameClaim(claims); got != tc.want {
			t.Errorf("%s: nameClaim = %q, want %q", tc.name, got, tc.want)
		}
	}
}
