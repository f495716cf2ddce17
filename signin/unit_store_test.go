package signin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/signin"
)

// steppedNow is a clock a test moves by hand.
type steppedNow struct{ ns atomic.Int64 }

func newSteppedNow() *steppedNow {
	c := &steppedNow{}
	c.ns.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *steppedNow) Now() time.Time   { return time.Unix(0, c.ns.Load()).UTC() }
func (c *steppedNow) Set(at time.Time) { c.ns.Store(at.UnixNano()) }

// Create derives what the server knows: the expiry is capped at
// MaxSession from now (a zero one is MaxSession), an earlier one is kept;
// the CSRF token is minted, never the caller's; every session has its own
// token and CSRF token.
func TestCreateDerivesExpiryAndCSRF(t *testing.T) {
	clk := newSteppedNow()
	st, _ := openStore(t, clk.Now)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		expires time.Time
		want    time.Time
	}{
		{"no expiry", time.Time{}, clk.Now().Add(signin.MaxSession)},
		{"past the cap", clk.Now().Add(signin.MaxSession + time.Nanosecond), clk.Now().Add(signin.MaxSession)},
		{"at the cap", clk.Now().Add(signin.MaxSession), clk.Now().Add(signin.MaxSession)},
		{"within the cap", clk.Now().Add(time.Hour), clk.Now().Add(time.Hour)},
	} {
		_, s, err := st.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1", ExpiresAt: tc.expires, CSRF: "chosen-by-caller"})
		if err != nil {
			t.Fatal(err)
		}
		if !s.ExpiresAt.Equal(tc.want) {
			t.Errorf("%s: expires %v, want %v", tc.name, s.ExpiresAt, tc.want)
		}
		if s.CSRF == "chosen-by-caller" || len(s.CSRF) < 43 {
			t.Errorf("%s: csrf %q, want a minted token", tc.name, s.CSRF)
		}
	}
	tok1, s1, _ := st.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1"})
	tok2, s2, _ := st.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1"})
	if tok1 == tok2 || s1.CSRF == s2.CSRF || tok1 == s1.CSRF {
		t.Errorf("two sessions share a token: %q %q, csrf %q %q", tok1, tok2, s1.CSRF, s2.CSRF)
	}
}

// Lookup answers a live session with everything stored and its id (the
// SHA-256 of the token, never the token); an empty, unknown or ended
// token, or one at or past its expiry, is ErrNoSession.
func TestLookup(t *testing.T) {
	clk := newSteppedNow()
	st, _ := openStore(t, clk.Now)
	ctx := context.Background()
	tok, made, err := st.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1", Scopes: []string{"approvals:read"},
		Via: "code", Name: "Ada Lovelace", ExpiresAt: clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Lookup(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(tok))
	if got.ID != hex.EncodeToString(sum[:]) || strings.Contains(got.ID, tok) {
		t.Errorf("session id %q, want the token's SHA-256", got.ID)
	}
	if got.Tenant != "acme" || got.Member != "u-1" || got.Via != "code" || got.Name != "Ada Lovelace" ||
		got.CSRF != made.CSRF || len(got.Scopes) != 1 || !got.ExpiresAt.Equal(made.ExpiresAt) {
		t.Errorf("looked up %+v, want %+v", got, made)
	}

	for name, token := range map[string]string{"empty": "", "unknown": signin.NewToken(), "the csrf token": made.CSRF, "the id": got.ID} {
		if _, err := st.Lookup(ctx, token); !errors.Is(err, signin.ErrNoSession) {
			t.Errorf("%s token: %v, want ErrNoSession", name, err)
		}
	}

	clk.Set(made.ExpiresAt.Add(-time.Nanosecond))
	if _, err := st.Lookup(ctx, tok); err != nil {
		t.Errorf("a moment before its expiry: %v", err)
	}
	clk.Set(made.ExpiresAt)
	if _, err := st.Lookup(ctx, tok); !errors.Is(err, signin.ErrNoSession) {
		t.Errorf("at its expiry: %v, want ErrNoSession", err)
	}
}

// A value in the bucket that is not a session is no session, even one
// whose other fields would make a live session.
func TestLookupOfAValueNotASession(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	st, err := signin.OpenStore(ctx, b.JS, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := b.JS.KeyValue(ctx, signin.BucketSessions)
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{
		"not json":     `not json`,
		"a wrong type": `{"tenant":"acme","member":"u-1","scopes":"admin","expires_at":"2999-01-01T00:00:00Z"}`,
	} {
		tok := signin.NewToken()
		sum := sha256.Sum256([]byte(tok))
		if _, err := kv.Put(ctx, hex.EncodeToString(sum[:]), []byte(value)); err != nil {
			t.Fatal(err)
		}
		if s, err := st.Lookup(ctx, tok); !errors.Is(err, signin.ErrNoSession) {
			t.Errorf("%s: %+v %v, want ErrNoSession", name, s, err)
		}
	}
}

// End ends the session everywhere; ending one that is gone, or never was,
// is not an error, and ends no other session.
func TestEnd(t *testing.T) {
	a, b := openStore(t, nil)
	ctx := context.Background()
	tok, _, err := a.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1"})
	if err != nil {
		t.Fatal(err)
	}
	keep, _, err := a.Create(ctx, signin.Session{Tenant: "acme", Member: "u-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.End(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lookup(ctx, tok); !errors.Is(err, signin.ErrNoSession) {
		t.Errorf("after End in the other process: %v, want ErrNoSession", err)
	}
	for name, token := range map[string]string{"again": tok, "never was": signin.NewToken(), "empty": ""} {
		if err := a.End(ctx, token); err != nil {
			t.Errorf("End %s: %v", name, err)
		}
	}
	if _, err := a.Lookup(ctx, keep); err != nil {
		t.Errorf("another session ended too: %v", err)
	}
}

// A flow's state is used once: an empty, unknown or taken state is
// ErrNoFlow; each flow has its own state, nonce and verifier.
func TestTakeRefusesWhatIsNotAFlow(t *testing.T) {
	st, _ := openStore(t, nil)
	ctx := context.Background()
	s1, f1, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2, f2, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 || f1.Nonce == f2.Nonce || f1.Verifier == f2.Verifier || f1.Nonce == "" || f1.Verifier == "" {
		t.Errorf("two flows share a part: %q %+v, %q %+v", s1, f1, s2, f2)
	}
	if got, err := st.Take(ctx, s1); err != nil || got != f1 {
		t.Fatalf("Take: %+v %v, want %+v", got, err, f1)
	}
	for name, state := range map[string]string{"empty": "", "unknown": signin.NewToken(), "taken": s1, "the nonce": f2.Nonce} {
		if _, err := st.Take(ctx, state); !errors.Is(err, signin.ErrNoFlow) {
			t.Errorf("Take %s: %v, want ErrNoFlow", name, err)
		}
	}
	if got, err := st.Take(ctx, s2); err != nil || got != f2 {
		t.Errorf("the other flow: %+v %v", got, err)
	}
}

// The buckets keep sessions at most MaxSession and flows ten minutes: the
// server's copy of the cap, should the record's own expiry be wrong.
func TestBucketConfigs(t *testing.T) {
	for _, c := range signin.BucketConfigs(3) {
		switch c.Bucket {
		case signin.BucketSessions:
			if c.TTL != signin.MaxSession || c.History != 1 || c.Replicas != 3 {
				t.Errorf("sessions bucket %+v", c)
			}
		case signin.BucketFlows:
			if c.TTL != 10*time.Minute || c.History != 1 || c.Replicas != 3 {
				t.Errorf("flows bucket %+v", c)
			}
		default:
			t.Errorf("an unknown bucket %s", c.Bucket)
		}
	}
}
