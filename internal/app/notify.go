package app

import (
	"context"
	"fmt"
	"os"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/httpapi"
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
}

// readOutside reads the secrets; a variable that is named but not set
// stops the start. awaiting (nil where only the secrets are checked) is
// who a group's request waits on, for its links (notify.Links).
func readOutside(cfg *config.Config, awaiting func(*events.Request) []events.MemberID) (outside, error) {
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
	tenant := events.TenantID(tc.ID)
	if tc.SlackSigningSecretEnv != "" {
		secret, err := secretEnv("slack_signing_secret_env", tc.SlackSigningSecretEnv)
		if err != nil {
			return err
		}
		st := httpapi.SlackTenant{Tenant: tenant, Secret: []byte(secret), Members: map[string]events.MemberID{}}
		for _, m := range tc.Members {
			if m.SlackUserID != "" {
				st.Members[m.SlackUserID] = events.MemberID(m.ID)
			}
		}
		o.slack = append(o.slack, st)
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

func secretEnv(key, name string) (string, error) {
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("app: %s: %s is not set", key, name)
	}
	return v, nil
}

// startNotify runs webhook delivery (deciders role), off the decision
// path: it reads the state's streams on its own.
func (a *App) startNotify(ctx context.Context, o Options, js jetstream.JetStream) error {
	out, err := readOutside(o.Config, a.awaiting)
	if err != nil || len(out.endpoints) == 0 {
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
	a.workers.Go(func() error { return w.Run(ctx) })
	return nil
}

// awaiting is the people a pending request still waits on, as the tenant
// stands them now: each is notified (SPEC §12).
func (a *App) awaiting(r *events.Request) []events.MemberID {
	t, ok := a.views.Tenant(r.Tenant)
	if !ok {
		return nil
	}
	return t.Awaiting(r)
}
