package app

import (
	"context"
	"fmt"
	"time"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// auditAPI loads the checkpoint signer (from the variable
// audit_signing_key_env names, else the key kept in the state) and
// returns what the API serves the audit log with.
func auditAPI(ctx context.Context, js jetstream.JetStream, cfg *config.Config, a *App) (*httpapi.AuditConfig, error) {
	skey, err := auditKey(cfg)
	if err != nil {
		return nil, err
	}
	signer, err := audit.LoadSigner(ctx, js, skey, a.log)
	if err != nil {
		return nil, err
	}
	return &httpapi.AuditConfig{Log: audit.NewLog(js), Signer: signer}, nil
}

// buildAudit builds the audit writer, unless off: in the one deciders
// process that owns the writer's key in the deciders group (the others
// take over when it stops; the audit cursor's compare-and-set keeps the
// log whole even while two run for a moment). The writer reads on a
// connection of its own: on the deciders' one, every state write it
// reads queued behind the outbox's messages and theirs behind it, in
// one read loop.
func (a *App) buildAudit(views *views.Views, off bool) error {
	if off {
		return nil
	}
	lag := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "countersign_audit_lag_seconds",
		Help: "From a change to its audit entry's commit.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	active := prometheus.NewGauge(prometheus.GaugeOpts{Name: "countersign_audit_writer_active",
		Help: "1 while this process writes the audit log (one deciders process at a time does)."})
	for _, c := range []prometheus.Collector{lag, active} {
		if err := a.Registry.Register(c); err != nil {
			return fmt.Errorf("app: audit metrics: %w", err)
		}
	}
	js, err := a.Broker.Connect("audit")
	if err != nil {
		return err
	}
	tap := audit.NewTap() // this process's writes, as acknowledged: no delivery of their own
	a.Service.Store().SetTap(tap.Offer)
	w, err := audit.NewWriter(audit.WriterConfig{JS: js, Log: audit.NewLog(js), Logger: a.log, Shards: a.Service.Store().Shards(), Tap: tap,
		ConfigTenants: configTenants, Lag: func(d time.Duration) { lag.Observe(d.Seconds()) },
		Retention: func(t domain.TenantID) time.Duration {
			if ten, ok := views.Tenant(t); ok && ten.AuditRetention > 0 {
				return ten.AuditRetention
			}
			return audit.DefaultRetention
		}})
	if err != nil {
		return err
	}
	a.workers = append(a.workers, func(ctx context.Context) error {
		return a.group.RunOwned(ctx, auditWriterKey, func(ctx context.Context) error {
			active.Set(1)
			defer active.Set(0)
			return w.Run(ctx)
		})
	})
	return nil
}

// auditWriterKey is the audit writer's key in the deciders group.
const auditWriterKey = "audit-writer"

// configTenants names the tenants of a config file's revision.
func configTenants(raw []byte) []domain.TenantID {
	cfg, err := config.Parse(raw)
	if err != nil {
		return nil
	}
	var ids []domain.TenantID
	for _, t := range cfg.Tenants {
		ids = append(ids, domain.TenantID(t.ID))
	}
	return ids
}
