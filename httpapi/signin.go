package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/links"
	"github.com/countersign/countersign/problem"
	"github.com/countersign/countersign/signin"
)

// SignInConfig turns on sign-in with an OpenID provider (SPEC §13).
type SignInConfig struct {
	Provider *signin.Provider
	Store    *signin.Store
	// Secure: public_url is https, so cookies are Secure with the
	// __Host- prefix.
	Secure bool
	// Record receives each sign-in, sign-out, and each refusal whose claim
	// matched a member, Tenant and Member set (the audit log's hook, SPEC
	// §14); a refusal that matched nobody is counted in
	// countersign_signin_refusals_total and logged instead. Default:
	// logged at info.
	Record func(ctx context.Context, e SignInEvent)
}

// SignInEvent is one sign-in, sign-out or refusal.
type SignInEvent struct {
	Type   string // signin, signout or signin.refused
	Via    string // code (the inbox) or device (countersign login)
	Tenant string
	Member string
	Claim  string // the claim's value the provider gave, if any
	Reason string // why it was refused
	At     time.Time
}

// Sign-in event types.
const (
	SignInDone    = "signin"
	SignOutDone   = "signout"
	SignInRefused = "signin.refused"
)

// signInPath starts the inbox's sign-in.
const signInPath = "/inbox/signin"

// CallbackPath is the redirect URI's path, below public_url.
const CallbackPath = "/inbox/signin/callback"

// CSRFHeader carries a session's CSRF token on every answer made with the
// session cookie.
const CSRFHeader = "X-CSRF-Token"

// Cookie names without and with https (SPEC §13).
const (
	SessionCookie       = "countersign_session"
	SecureSessionCookie = "__Host-countersign_session"
	FlowCookie          = "countersign_signin"
	SecureFlowCookie    = "__Host-countersign_signin"
)

var (
	errNoSession = problem.New(http.StatusUnauthorized, "Unauthenticated", "no session: sign in") // the one 401 of SPEC §5, with or without oidc
	errCSRF      = problem.New(http.StatusForbidden, "Forbidden", "an answer made with the session cookie needs the "+CSRFHeader+" header of GET /v1/session").WithReason("csrf")
	errNoSignIn  = problem.New(http.StatusNotFound, "NotFound", "sign-in with an OpenID provider is not configured")
)

func (s *SignInConfig) cookieName() string {
	if s.Secure {
		return SecureSessionCookie
	}
	return SessionCookie
}

func (s *SignInConfig) flowCookieName() string {
	if s.Secure {
		return SecureFlowCookie
	}
	return FlowCookie
}

// cookie is a host-only, HttpOnly cookie at path /; maxAge < 0 clears it.
func (s *SignInConfig) cookie(name, value string, sameSite http.SameSite, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: s.Secure, SameSite: sameSite}
}

func (a *API) record(ctx context.Context, e SignInEvent) {
	e.At = time.Now().UTC()
	if a.signIn.Record != nil {
		a.signIn.Record(ctx, e)
		return
	}
	a.log.Info("sign-in", "type", e.Type, "via", e.Via, "tenant", e.Tenant, "member", e.Member, "claim", e.Claim, "reason", e.Reason)
}

func (a *API) signInRoutes() {
	a.handle("GET /v1/session", a.sessionInfo)
	a.handle("DELETE /v1/session", a.signOut)
	a.handle("POST /v1/login/device", a.deviceStart)
	a.handle("POST /v1/login/device/token", a.deviceToken)
	a.handle("GET /inbox/signin/options", a.signInOptions)
	a.handle("GET "+signInPath, a.signInStart)
	a.handle("GET "+CallbackPath, a.signInCallback)
}

// sessionCaller authenticates a session: the bearer token (countersign
// login) when the Authorization header has one, else the cookie. A write
// with the cookie needs the CSRF header.
func (a *API) sessionCaller(r *http.Request) (approvals.Caller, error) {
	if a.signIn == nil {
		return approvals.Caller{}, errNoSession
	}
	tok, byCookie := bearer(r), false
	if tok == "" {
		c, err := r.Cookie(a.signIn.cookieName())
		if err != nil {
			return approvals.Caller{}, errNoSession
		}
		tok, byCookie = c.Value, true
	}
	s, err := a.signIn.Store.Lookup(r.Context(), tok)
	if err != nil {
		return approvals.Caller{}, sessionErr(err)
	}
	if byCookie && !safeMethod(r.Method) && subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(s.CSRF)) != 1 {
		return approvals.Caller{}, errCSRF
	}
	return a.sessionPerson(s)
}

// sessionPerson is the caller of session s: its member, approvals:read
// and approvals:write, holding what ends with the session (EndSession).
func (a *API) sessionPerson(s signin.Session) (approvals.Caller, error) {
	c, ok := a.svc.PersonCaller(domain.TenantID(s.Tenant), domain.MemberID(s.Member))
	if !ok {
		return approvals.Caller{}, errNoSession // the member left the config
	}
	c.Session = s.ID
	return c, nil
}

// rpcSessions is /v1/rpc's session hook: a session's bearer token
// (countersign login), as given in the header or the subprotocol; never
// the cookie, which a page of another site could make a browser send
// with a WebSocket upgrade.
func (a *API) rpcSessions(r *http.Request, authorization string) approvals.Sessions {
	if a.signIn == nil {
		return nil
	}
	return func() (approvals.Caller, error) {
		tok, ok := wire.BearerToken(authorization)
		if !ok {
			return approvals.Caller{}, errNoSession
		}
		s, err := a.signIn.Store.Lookup(r.Context(), tok)
		if err != nil {
			return approvals.Caller{}, sessionErr(err)
		}
		return a.sessionPerson(s)
	}
}

// EndSession ends what the session id (signin.Session.ID) holds in this
// process: its long-polls answer 401, its event streams end. The process
// that ended the session calls it, and every process on the sessions'
// watch (signin.Store.WatchEnded).
func (a *API) EndSession(id string) int {
	return a.svc.Revoke(func(c approvals.Caller) bool { return c.Session == id })
}

func sessionErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, signin.ErrNoSession) {
		return errNoSession
	}
	return problem.New(http.StatusServiceUnavailable, "Unavailable", "sessions cannot be read now").Wrap(err)
}

// bearer is r's bearer token ("" for none): wire.BearerToken, the
// one parser of it.
func bearer(r *http.Request) string {
	tok, _ := wire.BearerToken(r.Header.Get("Authorization"))
	return tok
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// sessionInfo says who the session is, with the CSRF token for answers.
func (a *API) sessionInfo(w http.ResponseWriter, r *http.Request) error {
	s, _, err := a.session(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"tenant": s.Tenant, "member": s.Member, "scopes": s.Scopes,
		"expires_at": s.ExpiresAt.UTC().Format(time.RFC3339), "via": s.Via, "csrf_token": s.CSRF,
		"name": a.svc.PersonName(domain.TenantID(s.Tenant), domain.MemberID(s.Member))})
}

// session reads the request's own session (cookie or bearer) and its token.
func (a *API) session(r *http.Request) (signin.Session, string, error) {
	if _, err := a.sessionCaller(r); err != nil {
		return signin.Session{}, "", err
	}
	tok := bearer(r)
	if tok == "" {
		c, _ := r.Cookie(a.signIn.cookieName())
		tok = c.Value
	}
	s, err := a.signIn.Store.Lookup(r.Context(), tok)
	return s, tok, sessionErr(err)
}

// signOut ends the session server-side and clears the cookie.
func (a *API) signOut(w http.ResponseWriter, r *http.Request) error {
	s, tok, err := a.session(r)
	if err != nil {
		return err
	}
	if err := a.signIn.Store.End(r.Context(), tok); err != nil {
		return sessionErr(err)
	}
	a.EndSession(s.ID)
	a.record(r.Context(), SignInEvent{Type: SignOutDone, Via: s.Via, Tenant: s.Tenant, Member: s.Member})
	http.SetCookie(w, a.signIn.cookie(a.signIn.cookieName(), "", http.SameSiteStrictMode, -1))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// issue makes the session of an identity, or says why not.
func (a *API) issue(ctx context.Context, id signin.Identity, via string) (string, signin.Session, string, error) {
	m, code, why := a.member(id.Value)
	if why != "" {
		a.refused(ctx, via, id.Value, code, why)
		return "", signin.Session{}, why, nil
	}
	tok, s, err := a.signIn.Store.Create(ctx, signin.Session{Tenant: string(m.tenant), Member: string(m.member),
		Scopes: []string{domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite}, Via: via, Name: id.Name})
	if err != nil {
		return "", s, "", err
	}
	a.svc.LearnName(m.tenant, m.member, id.Name)
	a.record(ctx, SignInEvent{Type: SignInDone, Via: via, Tenant: s.Tenant, Member: s.Member, Claim: id.Value})
	return tok, s, "", nil
}

// linkNotSignedIn says why a decision link may not answer here ("" if it
// may): with sign-in configured, only the person the link names, signed
// in with their session cookie, answers with it.
func (a *API) linkNotSignedIn(r *http.Request, c links.Claim) string {
	if a.signIn == nil {
		return ""
	}
	ck, err := r.Cookie(a.signIn.cookieName())
	if err != nil {
		return a.linkOnlyFor(c)
	}
	s, err := a.signIn.Store.Lookup(r.Context(), ck.Value)
	switch {
	case err != nil:
		return "Your session has ended: sign in to the inbox (" + signInPath + ") and open the link again."
	case s.Tenant != string(c.Tenant) || s.Member != string(c.Person):
		return a.linkSentTo(c, domain.TenantID(s.Tenant), domain.MemberID(s.Member))
	}
	return ""
}
