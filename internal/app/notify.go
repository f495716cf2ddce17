package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/notify"
	"github.com/nats-io/nats.go/jetstream"
)

// outside is what the config says about telling people and taking their
// answers outside the API (SPEC §10), with the secrets read from the
// variables it names.
type outside struct {
	endpoints []notify.Endpoint
	links     *notify.Links
	linkKey   *httpapi.LinkConfig
	slack     []httpapi.SlackTenant
	mail      []notify.Mail
}

// readOutside reads the secrets; a variable that is named but not set
// stops the start. awaiting (nil where only the secrets are checked) is
// who a group's request waits on, for its links (notify.Links).
func readOutside(cfg *config.Config, awaiting func(*domain.Request) []domain.MemberID) (outside, error) {
	var o outside
	if cfg.PublicURL != "" {
		key, err := secretEnv("link_secret_env", cfg.LinkSecretEnv)
		if err != nil {
			return o, err
		}
		o.links = &notify.Links{PublicURL: cfg.PublicURL, Secret: []byte(key), Awaiting: awaiting}
		o.linkKey = &httpapi.LinkConfig{Secret: []byte(key)}
	}
	for _, tc := range cfg.Tenants {
		if err := o.addTenant(tc); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (o *outside) addTenant(tc *config.TenantConfig) error {
	tenant := domain.TenantID(tc.ID)
	if tc.SlackSigningSecretEnv != "" {
		secret, err := secretEnv("slack_signing_secret_env", tc.SlackSigningSecretEnv)
		if err != nil {
			return err
		}
		st := httpapi.SlackTenant{Tenant: tenant, Secret: []byte(secret), Members: map[string]domain.MemberID{}}
		for _, m := range tc.Members {
			if m.SlackUserID != "" {
				st.Members[m.SlackUserID] = domain.MemberID(m.ID)
			}
		}
		o.slack = append(o.slack, st)
	}
	if err := o.addMail(tc); err != nil {
		return err
	}
	for _, wc := range tc.Webhooks {
		ep := notify.Endpoint{Tenant: tenant, URL: wc.URL, Events: wc.Events, Format: wc.Format, Interactive: tc.SlackSigningSecretEnv != ""}
		if wc.SecretEnv != "" {
			v, err := secretEnv("secret_env", wc.SecretEnv)
			if err != nil {
				return err
			}
			if ep.Key, err = notify.ParseSecret(v); err != nil {
				return fmt.Errorf("app: webhook %s: %w", wc.URL, err)
			}
		}
		o.endpoints = append(o.endpoints, ep)
	}
	return nil
}

// addMail reads the tenant's email credentials, when it has email.
func (o *outside) addMail(tc *config.TenantConfig) error {
	e := tc.Email
	if e == nil {
		return nil
	}
	m := notify.Mail{Tenant: domain.TenantID(tc.ID), Addr: e.SMTP, From: e.From, StartTLS: e.UsesStartTLS()}
	if e.UsernameEnv != "" {
		var err error
		if m.Username, err = secretEnv("email.username_env", e.UsernameEnv); err != nil {
			return err
		}
		if m.Password, err = secretEnv("email.password_env", e.PasswordEnv); err != nil {
			return err
		}
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("app: tenant %s: %w", tc.ID, err)
	}
	o.mail = append(o.mail, m)
	return nil
}

func secretEnv(key, name string) (string, error) {
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("app: %s: %s is not set", key, name)
	}
	return v, nil
}

// buildNotify builds webhook delivery and email (deciders role), off the
// decision path: each reads the state's streams on its own.
func (a *App) buildNotify(ctx context.Context, o Options, js jetstream.JetStream) error {
	out, err := readOutside(o.Config, a.awaiting)
	if err != nil {
		return err
	}
	if err := a.buildMail(ctx, o, js, out); err != nil || len(out.endpoints) == 0 {
		return err
	}
	w, err := notify.New(notify.Config{JS: js, Endpoints: out.endpoints, Links: out.links, Replicas: a.Broker.Replicas, Shards: max(o.Config.RequestShards, 1),
		Tuning: o.Notify, Registry: a.Registry, Logger: a.log, Clock: o.Clock, Name: a.Service.PersonName})
	if err != nil {
		return err
	}
	if err := w.Prepare(ctx); err != nil {
		return err
	}
	a.workers = append(a.workers, w.Run)
	return nil
}

// buildMail builds the tenants' email (SPEC §10 "Email"), when any has it.
func (a *App) buildMail(ctx context.Context, o Options, js jetstream.JetStream, out outside) error {
	if len(out.mail) == 0 {
		return nil
	}
	m, err := notify.NewMailer(notify.MailConfig{JS: js, Tenants: out.mail, Links: out.links, Tenant: a.views.Tenant, Name: a.Service.PersonName,
		Request: a.storedRequest, Replicas: a.Broker.Replicas, Shards: max(o.Config.RequestShards, 1), Tuning: o.Notify,
		Registry: a.Registry, Logger: a.log, Clock: o.Clock})
	if err != nil {
		return err
	}
	if err := m.Prepare(ctx); err != nil {
		return err
	}
	a.workers = append(a.workers, m.Run)
	return nil
}

// storedRequest reads a request as stored now; nil when it is gone.
func (a *App) storedRequest(ctx context.Context, t domain.TenantID, id domain.RequestID) (*domain.Request, error) {
	rec, err := a.Service.Store().GetRequest(ctx, t, id)
	if errors.Is(err, kvstate.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rec.Request, nil
}

// awaiting is the people a pending request still waits on, as the tenant
// stands them now: each is notified (SPEC §12).
func (a *App) awaiting(r *domain.Request) []domain.MemberID {
	t, ok := a.views.Tenant(r.Tenant)
	if !ok {
		return nil
	}
	return t.Awaiting(r)
}
