package httpapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/signin"
)

// Why a sign-in was refused: the reason label of
// countersign_signin_refusals_total, for refusals that matched no member.
const (
	refusedState      = "state_mismatch"   // the callback's state is not this browser's
	refusedFlow       = "flow_unknown"     // the sign-in was used already or has expired
	refusedProvider   = "provider_error"   // the provider answered with an error
	refusedToken      = "token_invalid"    // the code or the ID token did not verify
	refusedUnverified = "email_unverified" // email_verified is not true
	refusedNoMember   = "no_member"        // no member has the claim's value
	refusedAmbiguous  = "ambiguous_member" // more than one member has it
)

func newSignInRefusals(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_signin_refusals_total",
		Help: "Sign-in refusals that matched no member (those that did are audit entries of the member's tenant), by reason."}, []string{"reason"})
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("httpapi: metrics: %w", err)
	}
	for _, r := range []string{refusedState, refusedFlow, refusedProvider, refusedToken, refusedUnverified, refusedNoMember, refusedAmbiguous} {
		c.WithLabelValues(r)
	}
	return c, nil
}

// refusalCode names a refusal of the provider's answer (signin.Provider's
// Exchange or DeviceToken).
func refusalCode(err error) string {
	if errors.Is(err, signin.ErrUnverified) {
		return refusedUnverified
	}
	return refusedToken
}

// refused records a refusal (SPEC §13): an audit entry in the tenant of
// each member whose email is the claim's value (claim is "" when the
// provider's answer did not verify: nothing it says is trusted), else a
// count by code and a line in the process log, since no tenant owns it.
func (a *API) refused(ctx context.Context, via, claim, code, why string) {
	matched := a.members(claim)
	for _, m := range matched {
		a.record(ctx, SignInEvent{Type: SignInRefused, Via: via, Tenant: string(m.tenant), Member: string(m.member), Claim: claim, Reason: why})
	}
	if len(matched) > 0 {
		return
	}
	a.signInRefusals.WithLabelValues(code).Inc()
	a.log.Info("sign-in refused", "via", via, "reason", code, "claim", claim, "why", why)
}

type memberRef struct {
	tenant domain.TenantID
	member domain.MemberID
}

// members finds every member whose email is value (none for "").
func (a *API) members(value string) []memberRef {
	if value == "" {
		return nil
	}
	var out []memberRef
	for _, t := range a.svc.Views().Tenants() {
		for _, m := range t.Members {
			if m.Email != "" && strings.EqualFold(m.Email, value) {
				out = append(out, memberRef{t.ID, m.ID})
			}
		}
	}
	return out
}

// member finds the one member whose email is the claim's value, or says
// why not (and with which refusal code).
func (a *API) member(value string) (memberRef, string, string) {
	switch ms := a.members(value); len(ms) {
	case 0:
		return memberRef{}, refusedNoMember, "no member has the email " + value
	case 1:
		return ms[0], "", ""
	default:
		return memberRef{}, refusedAmbiguous, "more than one member has the email " + value
	}
}
