package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nuid"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/signin"
)

// signIn builds sign-in with the configured OpenID provider (SPEC §13),
// or nil without `oidc:`. Sign-ins, sign-outs and refusals are entries of
// the tenant's audit log (SPEC §14, recordSignIn).
func (a *App) signIn(ctx context.Context, cfg *config.Config) (*httpapi.SignInConfig, error) {
	if cfg.OIDC == nil {
		return nil, nil
	}
	sc, err := providerConfig(cfg)
	if err != nil {
		return nil, err
	}
	p, err := signin.NewProvider(sc)
	if err != nil {
		return nil, err
	}
	st, err := signin.OpenStore(ctx, a.Broker.JS, a.Broker.Replicas, nil)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	return &httpapi.SignInConfig{Provider: p, Store: st, Secure: strings.HasPrefix(sc.RedirectURL, "https://"), Record: a.recordSignIn}, nil
}

// signInTypes are the audit entry types of httpapi's sign-in events.
var signInTypes = map[string]string{
	httpapi.SignInDone:    events.TypeSignIn,
	httpapi.SignOutDone:   events.TypeSignOut,
	httpapi.SignInRefused: events.TypeSignInRefused,
}

// recordSignIn appends a sign-in event to its tenant's audit log. httpapi
// hands it only events that name a member (a refusal that matched nobody
// is counted and logged there); one without a tenant, or one the audit
// input could not take, goes to the process log.
func (a *App) recordSignIn(ctx context.Context, e httpapi.SignInEvent) {
	log := func(err error) {
		a.log.Info("sign-in", "type", e.Type, "via", e.Via, "tenant", e.Tenant, "member", e.Member, "claim", e.Claim, "reason", e.Reason, "audit_error", err)
	}
	if e.Tenant == "" {
		log(nil)
		return
	}
	data, _ := json.Marshal(map[string]string{"via": e.Via, "claim": e.Claim, "reason": e.Reason})
	err := audit.Append(ctx, a.Broker.JS, audit.Input{ID: "signin-" + nuid.Next(), Tenant: domain.TenantID(e.Tenant), Type: signInTypes[e.Type],
		Actor: audit.Actor{Kind: domain.KindPerson, ID: e.Member}, Subject: e.Member, At: e.At, Data: data})
	if err != nil {
		log(err)
	}
}

// sessionsEnded is what each config revision this process stores runs
// (SPEC §10, §13): it ends the sessions of the members the revision
// removed, so that they never authenticate again, not even if the member
// comes back. A session ended anywhere (sign-out, or this) ends what it
// holds in every process through the sessions bucket's watch (buildAPI).
// None without sign-in.
func (a *App) sessionsEnded(s *httpapi.SignInConfig) []func(ctx context.Context) {
	if s == nil {
		return nil
	}
	svc := a.Service
	return []func(ctx context.Context){func(ctx context.Context) {
		n, err := s.Store.EndWhere(ctx, func(se signin.Session) bool {
			_, ok := svc.PersonCaller(domain.TenantID(se.Tenant), domain.MemberID(se.Member))
			return !ok
		})
		if err != nil || n > 0 {
			a.log.Info("sessions of removed members ended", "sessions", n, "err", err)
		}
	}}
}
