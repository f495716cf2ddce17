package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/countersign/countersign/problem"
	"github.com/countersign/countersign/signin"
)

// signInOptions tells the inbox whether to offer "Sign in with <issuer>".
func (a *API) signInOptions(w http.ResponseWriter, _ *http.Request) error {
	if a.signIn == nil {
		return writeJSON(w, http.StatusOK, map[string]any{"oidc": false})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"oidc": true, "issuer": a.signIn.Provider.Issuer()})
}

// signInStart begins the code flow: a fresh state, nonce and PKCE
// verifier, the state also in a short-lived cookie that binds the flow to
// this browser (Lax: it must come back on the provider's redirect).
//
// The one query parameter taken is prompt=select_account ("Use another
// account" on a refusal page): it is passed on to the provider, so that
// a person signed in there as the wrong account may pick another. Any
// other prompt (or a repeated one) is refused and starts nothing.
func (a *API) signInStart(w http.ResponseWriter, r *http.Request) error {
	if a.signIn == nil {
		return errNoSignIn
	}
	prompt, err := signInPrompt(r.URL.Query())
	if err != nil {
		return err
	}
	state, f, err := a.signIn.Store.Begin(r.Context())
	if err != nil {
		return sessionErr(err)
	}
	to, err := a.signIn.Provider.AuthURL(r.Context(), state, f)
	if err != nil {
		a.log.Warn("sign-in: provider unavailable", "err", err)
		return problem.New(http.StatusServiceUnavailable, "Unavailable", "the identity provider cannot be reached now")
	}
	if prompt != "" {
		if to, err = withQuery(to, "prompt", prompt); err != nil {
			a.log.Warn("sign-in: provider's authorization URL", "err", err)
			return problem.New(http.StatusServiceUnavailable, "Unavailable", "the identity provider's authorization address is not usable")
		}
	}
	http.SetCookie(w, a.signIn.cookie(a.signIn.flowCookieName(), state, http.SameSiteLaxMode, int((10*time.Minute).Seconds())))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// signInCallback ends the code flow: the state must be this browser's and
// unused, the code is redeemed with the verifier, the ID token verified
// with the nonce, and the member matched. Any refusal writes a page and
// issues nothing.
func (a *API) signInCallback(w http.ResponseWriter, r *http.Request) error {
	if a.signIn == nil {
		return errNoSignIn
	}
	http.SetCookie(w, a.signIn.cookie(a.signIn.flowCookieName(), "", http.SameSiteLaxMode, -1))
	q := r.URL.Query()
	c, err := r.Cookie(a.signIn.flowCookieName())
	if err != nil || c.Value != q.Get("state") || q.Get("state") == "" {
		a.signInRefused(w, r, http.StatusBadRequest, refusedState, "the sign-in's state does not match this browser's", "")
		return nil
	}
	f, err := a.signIn.Store.Take(r.Context(), q.Get("state"))
	if err != nil {
		a.signInRefused(w, r, http.StatusBadRequest, refusedFlow, "this sign-in was already used or has expired", "")
		return nil
	}
	if e := q.Get("error"); e != "" {
		a.signInRefused(w, r, http.StatusForbidden, refusedProvider, "the provider refused: "+e, "")
		return nil
	}
	id, err := a.signIn.Provider.Exchange(r.Context(), q.Get("code"), f)
	if err != nil {
		a.signInRefused(w, r, http.StatusForbidden, refusalCode(err), refusalText(err), id.Value)
		return nil
	}
	tok, s, why, err := a.issue(r.Context(), id, "code")
	if err != nil {
		return sessionErr(err)
	}
	if why != "" {
		writeSignInPage(w, http.StatusForbidden, signInPage{Title: "Not signed in", Why: "You signed in with the provider as " + id.Value +
			", but " + why + " here, so no session was made. Ask an administrator to add your email to a member, or sign in as another account.",
			Another: true})
		return nil
	}
	http.SetCookie(w, a.signIn.cookie(a.signIn.cookieName(), tok, http.SameSiteStrictMode, int(time.Until(s.ExpiresAt).Seconds())))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

func refusalText(err error) string {
	if errors.Is(err, signin.ErrUnverified) {
		return "the provider does not say it verified your email"
	}
	if errors.Is(err, signin.ErrRefused) {
		return "the provider's answer did not verify"
	}
	return "the identity provider cannot be reached now"
}

// signInRefused records the refusal (refused) and writes the page.
func (a *API) signInRefused(w http.ResponseWriter, r *http.Request, status int, code, why, claim string) {
	a.refused(r.Context(), "code", claim, code, why)
	writeSignInPage(w, status, signInPage{Title: "Not signed in", Why: "Sign-in failed: " + why + ". No session was made.", Another: true})
}

// SelectAccount is the only prompt the sign-in start passes on (OpenID
// Connect Core §3.1.2.1): the provider lets the person pick an account.
const SelectAccount = "select_account"

// signInPrompt is the prompt a sign-in start asks for: "" or
// SelectAccount; anything else is InvalidRequest.
func signInPrompt(q url.Values) (string, error) {
	for k, v := range q {
		if k != "prompt" {
			return "", problem.Invalid(k, "the sign-in start takes no parameter but prompt="+SelectAccount)
		}
		if len(v) != 1 || v[0] != SelectAccount {
			return "", problem.Invalid("prompt", "the only prompt taken is "+SelectAccount)
		}
	}
	return q.Get("prompt"), nil
}

// withQuery is the address to with key=value added to its query.
func withQuery(to, key, value string) (string, error) {
	u, err := url.Parse(to)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// signInPage is what a sign-in that made no session shows: why, a way
// back to the inbox, and (Another) "Use another account", which starts
// the flow again with prompt=select_account.
type signInPage struct {
	Title   string
	Why     string
	Another bool
	Style   template.CSS
}

// signInStyle is the sign-in pages' only style; signInCSP allows exactly it.
const signInStyle = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;line-height:1.45;color:#1d1d1b}
.why{padding:.75rem 1rem;border-left:4px solid #a32020;background:#fbeaea;border-radius:4px}
.ways{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.5rem}
.ways a{display:inline-block;padding:.6rem 1.1rem;border-radius:6px;border:1px solid #1f5f99;color:#1f5f99;text-decoration:none;font-weight:600}
.ways a.primary{background:#1f5f99;color:#fff}`

var signInCSP = "default-src 'none'; style-src 'sha256-" + hashOf(signInStyle) + "'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

var signInTemplate = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title><style>{{.Style}}</style></head><body>
<h1>{{.Title}}</h1>
<p class="why" id="why">{{.Why}}</p>
<p class="ways">{{if .Another}}<a class="primary" id="another" href="/inbox/signin?prompt=select_account">Use another account</a>{{end}}
<a id="back" href="/">Back to the inbox</a></p>
</body></html>
`))

// writeSignInPage writes p with status, the headers of a page that runs
// no script and cannot be framed.
func writeSignInPage(w http.ResponseWriter, status int, p signInPage) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", signInCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	p.Style = template.CSS(signInStyle)
	var b bytes.Buffer
	if err := signInTemplate.Execute(&b, p); err != nil {
		http.Error(w, "page failed", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// deviceStart begins a device authorization grant for countersign login.
func (a *API) deviceStart(w http.ResponseWriter, r *http.Request) error {
	if a.signIn == nil {
		return errNoSignIn
	}
	da, err := a.signIn.Provider.DeviceAuth(r.Context())
	if err != nil {
		a.log.Warn("sign-in: device authorization failed", "err", err)
		return problem.New(http.StatusServiceUnavailable, "Unavailable", "the identity provider cannot start a device sign-in now")
	}
	return writeJSON(w, http.StatusOK, map[string]any{"device_code": da.DeviceCode, "user_code": da.UserCode,
		"verification_uri": da.VerificationURI, "verification_uri_complete": da.VerificationURIComplete,
		"expires_at": da.Expiry.UTC().Format(time.RFC3339), "interval": da.Interval})
}

// devicePoll bounds one POST /v1/login/device/token: the client asks again
// after a 202.
const devicePoll = 25 * time.Second

// deviceToken waits (up to devicePoll) for the person to finish the device
// flow, then issues a session token.
func (a *API) deviceToken(w http.ResponseWriter, r *http.Request) error {
	if a.signIn == nil {
		return errNoSignIn
	}
	var in struct {
		DeviceCode string `json:"device_code"`
		Interval   int64  `json:"interval"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.DeviceCode == "" {
		return problem.Invalid("device_code", "the body must be {\"device_code\": \"…\"} from POST /v1/login/device")
	}
	ctx, cancel := context.WithTimeout(r.Context(), devicePoll)
	defer cancel()
	id, err := a.signIn.Provider.DeviceToken(ctx, in.DeviceCode, time.Duration(max(in.Interval, 1))*time.Second)
	switch {
	case errors.Is(err, signin.ErrPending):
		return writeJSON(w, http.StatusAccepted, map[string]string{"status": "authorization_pending"})
	case errors.Is(err, signin.ErrRefused):
		a.refused(r.Context(), "device", id.Value, refusalCode(err), err.Error())
		return problem.New(http.StatusForbidden, "Forbidden", "sign-in refused: "+strings.TrimPrefix(err.Error(), signin.ErrRefused.Error()+": ")).WithReason("signin_refused")
	case err != nil:
		a.log.Warn("sign-in: device token failed", "err", err)
		return problem.New(http.StatusServiceUnavailable, "Unavailable", refusalText(err))
	}
	tok, s, why, err := a.issue(r.Context(), id, "device")
	if err != nil {
		return sessionErr(err)
	}
	if why != "" {
		return problem.New(http.StatusForbidden, "Forbidden", "signed in as "+id.Value+", but "+why+" here; no session was made").WithReason("no_member")
	}
	return writeJSON(w, http.StatusOK, map[string]any{"token": tok, "tenant": s.Tenant, "member": s.Member,
		"scopes": s.Scopes, "expires_at": s.ExpiresAt.UTC().Format(time.RFC3339)})
}
