package notify

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery outcomes, the label of countersign_webhook_deliveries_total.
const (
	outcomeDelivered = "delivered" // a 2xx answer
	outcomeFailed    = "failed"    // an attempt failed; it will be retried
	outcomeDropped   = "dropped"   // retried until MaxAge; given up
	outcomeInvalid   = "invalid"   // the stored event could not be encoded
)

type metrics struct {
	deliveries *prometheus.CounterVec
	backlog    prometheus.Gauge
	mu         sync.Mutex
	feeds      []*feed
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered, failed (retried), dropped (given up after max age), invalid."}, []string{"outcome"}),
		backlog: prometheus.NewGauge(prometheus.GaugeOpts{Name: "countersign_webhook_retry_backlog",
			Help: "Events whose delivery failed at least once and is being retried."}),
	}
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "countersign_webhook_oldest_undelivered_seconds",
		Help: "Age of the oldest event not yet delivered to some endpoint (0: none)."}, m.oldest)
	for _, c := range []prometheus.Collector{m.deliveries, m.backlog, oldest} {
		_ = reg.Register(c)
	}
	for _, o := range []string{outcomeDelivered, outcomeFailed, outcomeDropped, outcomeInvalid} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

func (m *metrics) add(f *feed) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.feeds = append(m.feeds, f)
}

func (m *metrics) oldest() float64 {
	m.mu.Lock()
	feeds := m.feeds
	m.mu.Unlock()
	var first time.Time
	for _, f := range feeds {
		if at, ok := f.oldest(); ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if first.IsZero() {
		return 0
	}
	return time.Since(first).Seconds()
}
