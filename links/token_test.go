package links

import (
	"errors"
	"testing"
	"time"
)

var key = []byte("test key")

func claim() Claim {
	return Claim{Tenant: "acme", Request: "req_01JC0000000000000000000000", Revision: 3, Person: "u-1",
		Decision: Approve, Deadline: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func TestRoundTrip(t *testing.T) {
	for _, d := range []string{Approve, Deny} {
		c := claim()
		c.Decision = d
		got, err := Check(key, Mint(key, c), c.Deadline.Add(-time.Second))
		if err != nil || got != c {
			t.Fatalf("Check = %+v, %v; want %+v", got, err, c)
		}
	}
}

// Every changed, dropped or added character, and every other key, fails;
// nothing but the minted token passes.
func TestEveryAlterationFails(t *testing.T) {
	tok := Mint(key, claim())
	now := claim().Deadline.Add(-time.Hour)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		for _, c := range []byte{alphabet[(indexOf(alphabet, tok[i])+1)%64], '=', '.'} {
			bad := tok[:i] + string(c) + tok[i+1:]
			if _, err := Check(key, bad, now); err == nil {
				t.Fatalf("token changed at %d passed", i)
			}
		}
		if _, err := Check(key, tok[:i], now); err == nil {
			t.Fatalf("token cut to %d passed", i)
		}
	}
	if _, err := Check(key, tok+"A", now); err == nil {
		t.Fatal("a longer token passed")
	}
	if _, err := Check([]byte("other key"), tok, now); !errors.Is(err, ErrForged) {
		t.Fatalf("another key: %v, want ErrForged", err)
	}
	for _, s := range []string{"", "!!!", "AAAA", tok + "=="} {
		if _, err := Check(key, s, now); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", s, err)
		}
	}
}

func TestExpiresAtTheDeadline(t *testing.T) {
	c := claim()
	if _, err := Check(key, Mint(key, c), c.Deadline); !errors.Is(err, ErrExpired) {
		t.Fatalf("at the deadline: %v, want ErrExpired", err)
	}
}

func indexOf(s string, b byte) int {
	for i := range s {
		if s[i] == b {
			return i
		}
	}
	return 0
}
