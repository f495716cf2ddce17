package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
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
func (a *API) signInStart(w http.ResponseWriter, r *http.Request) error {
	if a.signIn == nil {
		return errNoSignIn
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
		writeLinkPage(w, http.StatusForbidden, linkPage{Title: "Not signed in", Why: "You signed in with the provider as " + id.Value +
			", but " + why + " here, so no session was made. Ask an administrator to add your email to a member."})
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
	writeLinkPage(w, status, linkPage{Title: "Not signed in", Why: "Sign-in failed: " + why + ". No session was made; start again from the inbox."})
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
