package signin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/oauth2"
)

// MaxSession is the longest a session lives (SPEC §13: at most 8 hours).
const MaxSession = 8 * time.Hour

// flowTTL is how long a started sign-in may take to come back.
const flowTTL = 10 * time.Minute

// Bucket names.
const (
	BucketSessions = "signin_sessions"
	BucketFlows    = "signin_flows"
)

// BucketConfigs declares the buckets; replicas as the rest of the state.
func BucketConfigs(replicas int) []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{
		{Bucket: BucketSessions, Description: "people's sessions, one key per SHA-256 of the session token",
			History: 1, TTL: MaxSession, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketFlows, Description: "sign-ins in progress, one key per SHA-256 of the state",
			History: 1, TTL: flowTTL, Storage: jetstream.FileStorage, Replicas: replicas},
	}
}

// Session is a signed-in person.
type Session struct {
	Tenant    string    `json:"tenant"`
	Member    string    `json:"member"`
	Scopes    []string  `json:"scopes"`
	CSRF      string    `json:"csrf"` // the token answers made with the cookie carry
	ExpiresAt time.Time `json:"expires_at"`
	Via       string    `json:"via"` // "code" (the inbox) or "device" (countersign login)
	// Name is the ID token's name claim at sign-in ("" when none).
	Name string `json:"name,omitempty"`
	// ID names the session without its token: the SHA-256 of the token,
	// its key in the bucket. Set by Lookup, never stored.
	ID string `json:"-"`
}

// Flow is a code flow between its start and its callback.
type Flow struct {
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"` // the PKCE code verifier
}

// Store keeps sessions and flows. Safe for concurrent use.
type Store struct {
	sessions, flows jetstream.KeyValue
	now             func() time.Time
}

// OpenStore creates the buckets if missing and returns the store. now is
// the clock (nil: time.Now).
func OpenStore(ctx context.Context, js jetstream.JetStream, replicas int, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	kvs := make([]jetstream.KeyValue, 0, 2)
	for _, cfg := range BucketConfigs(replicas) {
		kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("signin: bucket %s: %w", cfg.Bucket, err)
		}
		kvs = append(kvs, kv)
	}
	return &Store{sessions: kvs[0], flows: kvs[1], now: now}, nil
}

// NewToken returns 32 random bytes, base64url without padding.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func key(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Create stores s (its ExpiresAt capped at MaxSession from now, its CSRF
// token minted) and returns the session token and the stored session.
func (st *Store) Create(ctx context.Context, s Session) (string, Session, error) {
	if limit := st.now().Add(MaxSession); s.ExpiresAt.IsZero() || s.ExpiresAt.After(limit) {
		s.ExpiresAt = limit
	}
	s.CSRF = NewToken()
	tok := NewToken()
	b, _ := json.Marshal(s)
	if _, err := st.sessions.Create(ctx, key(tok), b); err != nil {
		return "", Session{}, fmt.Errorf("signin: create session: %w", err)
	}
	return tok, s, nil
}

// Lookup returns the live session of token. Errors: ErrNoSession, or the
// store's error.
func (st *Store) Lookup(ctx context.Context, token string) (Session, error) {
	if token == "" {
		return Session{}, ErrNoSession
	}
	e, err := st.sessions.Get(ctx, key(token))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("signin: lookup session: %w", err)
	}
	var s Session
	if json.Unmarshal(e.Value(), &s) != nil || !st.now().Before(s.ExpiresAt) {
		return Session{}, ErrNoSession
	}
	s.ID = e.Key()
	return s, nil
}

// End deletes the session of token; ending one that is gone is not an
// error.
func (st *Store) End(ctx context.Context, token string) error {
	if err := st.sessions.Purge(ctx, key(token)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("signin: end session: %w", err)
	}
	return nil
}

// Begin stores a new flow under a fresh state and returns the state.
func (st *Store) Begin(ctx context.Context) (string, Flow, error) {
	state := NewToken()
	f := Flow{Nonce: NewToken(), Verifier: oauth2.GenerateVerifier()}
	b, _ := json.Marshal(f)
	if _, err := st.flows.Create(ctx, key(state), b); err != nil {
		return "", Flow{}, fmt.Errorf("signin: begin: %w", err)
	}
	return state, f, nil
}

// Take returns the flow of state and deletes it, so that a state (and the
// code it comes back with) is used once, whichever process takes it.
// Errors: ErrNoFlow, or the store's error.
func (st *Store) Take(ctx context.Context, state string) (Flow, error) {
	if state == "" {
		return Flow{}, ErrNoFlow
	}
	e, err := st.flows.Get(ctx, key(state))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Flow{}, ErrNoFlow
	}
	if err != nil {
		return Flow{}, fmt.Errorf("signin: take: %w", err)
	}
	if err := st.flows.Delete(ctx, key(state), jetstream.LastRevision(e.Revision())); err != nil {
		return Flow{}, ErrNoFlow // another process took it first
	}
	var f Flow
	if json.Unmarshal(e.Value(), &f) != nil {
		return Flow{}, ErrNoFlow
	}
	return f, nil
}
