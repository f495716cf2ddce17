package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry, svc *approvals.Service) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_http_requests_total",
			Help: "HTTP requests by route and status code; 499: the client left before the answer."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "countersign_http_request_duration_seconds",
			Help: "HTTP request latency by route (long-polls included).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, []string{"route"}),
	}
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "countersign_longpolls_waiting",
		Help: "Long-polls held right now."}, func() float64 { return float64(svc.Hub().Waiting()) })
	for _, c := range []prometheus.Collector{m.requests, m.latency, waiting,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpapi: metrics: %w", err)
		}
	}
	return m, nil
}

// instrument counts and times one route.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusClientClosed is the code counted for a request whose client left
// before the answer (nginx's 499); nothing is written for it.
const statusClientClosed = 499

// abandoned marks w's request as left by its client.
func abandoned(w http.ResponseWriter) {
	if sw, ok := w.(*statusWriter); ok {
		sw.status = statusClientClosed
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
