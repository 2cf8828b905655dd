// Package metrics exposes the service to Prometheus at /metrics: HTTP
// requests by route and status, messages and bytes copied, IMAP errors by
// kind, WebSocket clients of this process, and, read from the database at
// each scrape, accounts by state and the job queue by kind and state
// (the same for every process on the database).
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Database reports the figures that all processes share.
type Database interface {
	// AccountCountsByState counts the accounts of every task by state.
	AccountCountsByState(ctx context.Context) (map[string]int64, error)
	// JobCountsByState counts the jobs not finished by kind and state.
	JobCountsByState(ctx context.Context) ([]JobCount, error)
}

// JobCount is how many jobs of a kind are in a state.
type JobCount struct {
	Kind, State string
	Jobs        int64
}

// Metrics are one process's collectors. The methods of a nil *Metrics do
// nothing, so that code under test needs none.
type Metrics struct {
	registry        *prometheus.Registry
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	messagesCopied  prometheus.Counter
	bytesCopied     prometheus.Counter
	messagesRefused prometheus.Counter
	imapErrors      *prometheus.CounterVec
	streams         prometheus.Gauge
}

// New returns the collectors of a process, with the shared figures read
// from db at each scrape.
func New(db Database, logger *slog.Logger) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mailmigrate_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mailmigrate_http_request_duration_seconds", Help: "Time to answer HTTP requests (WebSockets excluded).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		messagesCopied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mailmigrate_messages_copied_total", Help: "Messages appended to destinations by this process.",
		}),
		bytesCopied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mailmigrate_bytes_copied_total", Help: "Message bytes appended to destinations by this process.",
		}),
		messagesRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mailmigrate_messages_refused_total", Help: "Messages a destination refused (recorded and skipped).",
		}),
		imapErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mailmigrate_imap_errors_total", Help: "IMAP failures that ended an attempt or a login test, and throttling answers (kind throttled), by side and kind.",
		}, []string{"side", "kind"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mailmigrate_websocket_clients", Help: "Live event streams open on this process.",
		}),
	}
	m.registry.MustRegister(m.httpRequests, m.httpDuration, m.messagesCopied, m.bytesCopied,
		m.messagesRefused, m.imapErrors, m.streams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&databaseCollector{db: db, logger: logger})
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorLog: nil})
}

// Middleware counts requests by the route pattern that served them (not
// the path, whose ids would make a series each); unrouted ones count as
// "other".
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "other"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		m.httpRequests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
		if status != http.StatusSwitchingProtocols {
			m.httpDuration.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
		}
	})
}

// Copied counts messages and bytes appended.
func (m *Metrics) Copied(messages, bytes int64) {
	if m == nil || (messages <= 0 && bytes <= 0) {
		return
	}
	m.messagesCopied.Add(float64(max(messages, 0)))
	m.bytesCopied.Add(float64(max(bytes, 0)))
}

// Refused counts messages a destination refused.
func (m *Metrics) Refused(messages int64) {
	if m == nil || messages <= 0 {
		return
	}
	m.messagesRefused.Add(float64(messages))
}

// IMAPError counts a failure of kind on side ("source", "destination").
func (m *Metrics) IMAPError(side, kind string) {
	if m == nil {
		return
	}
	m.imapErrors.WithLabelValues(side, kind).Inc()
}

// StreamOpened counts an open event stream; call the result when it closes.
func (m *Metrics) StreamOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.streams.Inc()
	return m.streams.Dec
}

// databaseCollector reads the shared figures at scrape time.
type databaseCollector struct {
	db     Database
	logger *slog.Logger
}

var (
	accountsDesc = prometheus.NewDesc("mailmigrate_accounts", "Accounts of every task by state.", []string{"state"}, nil)
	jobsDesc     = prometheus.NewDesc("mailmigrate_jobs", "Jobs not finished (the queue) by kind and state.", []string{"kind", "state"}, nil)
)

func (c *databaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- accountsDesc
	ch <- jobsDesc
}

func (c *databaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	accounts, err := c.db.AccountCountsByState(ctx)
	if err != nil {
		c.logger.Warn("metrics: could not count accounts", "err", err)
		ch <- prometheus.NewInvalidMetric(accountsDesc, err)
	}
	for state, n := range accounts {
		ch <- prometheus.MustNewConstMetric(accountsDesc, prometheus.GaugeValue, float64(n), state)
	}
	jobs, err := c.db.JobCountsByState(ctx)
	if err != nil {
		c.logger.Warn("metrics: could not count jobs", "err", err)
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
	}
	for _, j := range jobs {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(j.Jobs), j.Kind, j.State)
	}
}
