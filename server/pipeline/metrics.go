package pipeline

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lakehold/catalog/service"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	reports  *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, svc *service.Service) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalog_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "catalog_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalog_metrics_reports_total", Help: "Client metrics reports received, by report type.",
		}, []string{"type"}),
	}
	reg.MustRegister(m.requests, m.latency, m.reports,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, _, _, isPool := svc.PoolStats(); isPool {
		gauge := func(name, help string, pick func(a, i, t int32) int32) prometheus.GaugeFunc {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
				a, i, t, _ := svc.PoolStats()
				return float64(pick(a, i, t))
			})
		}
		reg.MustRegister(
			gauge("catalog_db_pool_acquired_conns", "Postgres connections in use.", func(a, _, _ int32) int32 { return a }),
			gauge("catalog_db_pool_idle_conns", "Idle Postgres connections.", func(_, i, _ int32) int32 { return i }),
			gauge("catalog_db_pool_total_conns", "Open Postgres connections.", func(_, _, t int32) int32 { return t }),
		)
	}
	reg.MustRegister(jobsCollector{svc: svc})
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "catalog_clock_offset_seconds",
		Help: "How far the catalog database's clock was ahead of this replica's at the last measurement (negative: behind); past --max-clock-offset the replica refuses commits."},
		func() float64 {
			off, _ := svc.ClockOffset()
			return off.Seconds()
		}))
	return m
}

var (
	jobsDesc = prometheus.NewDesc("catalog_jobs", "Background jobs in the queue by state (finished ones until River's cleaner removes them).",
		[]string{"state"}, nil)
	jobsOldestDesc = prometheus.NewDesc("catalog_jobs_oldest_waiting_seconds",
		"How long the oldest job that could run now has been waiting (0: none waits).", nil, nil)
)

// JobsCollector returns the collector of the job queue's gauges, for a
// process that serves /metrics without a Server (`catalog worker`).
func JobsCollector(svc *service.Service) prometheus.Collector { return jobsCollector{svc: svc} }

// jobsCollector reads the job queue's counts at scrape time: the queue is
// shared by every replica, so any replica's scrape shows all of it.
type jobsCollector struct{ svc *service.Service }

func (jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc; ch <- jobsOldestDesc }

func (c jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.svc.Upkeep().JobStats(ctx)
	if err != nil {
		// A scrape while the database is away reports no job series
		// rather than failing the whole scrape.
		return
	}
	for _, state := range service.JobStates {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(st.ByState[state]), state)
	}
	ch <- prometheus.MustNewConstMetric(jobsOldestDesc, prometheus.GaugeValue, st.OldestWaiting.Seconds())
}

// MetricsHandler serves the metrics of cfg.Registry at /metrics.
func (p *Pipeline) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(p.cfg.Registry, promhttp.HandlerOpts{})
}

// CountReport counts a client metrics report of the given type.
func (p *Pipeline) CountReport(reportType string) {
	p.metrics.reports.WithLabelValues(reportType).Inc()
}

// methodLabel bounds the method label: a client may send any token as a
// method, and every distinct label value is a new series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch:
		return m
	}
	return "other"
}

// Metrics records count and latency per route pattern (never per raw
// path, which would explode cardinality).
func (p *Pipeline) Metrics(next http.Handler) http.Handler {
	m := p.metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		next.ServeHTTP(sw, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		method := methodLabel(r.Method)
		m.requests.WithLabelValues(route, method, strconv.Itoa(sw.code())).Inc()
		m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}
