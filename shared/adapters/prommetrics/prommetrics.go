// Package prommetrics is the metrics.Recorder adapter for local runs: it keeps
// every metric of metrics.Catalog in its own Prometheus registry (never the
// global one) and serves it at GET /metrics (scripts/localcloud).
//
// It never panics on bad input: unknown names are counted in
// ordersaga_metrics_unknown_total, other invalid calls in
// ordersaga_metrics_dropped_total{reason} (see metrics.Drop*).
package prommetrics

import (
	"context"
	"math"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"ordersaga/shared/domain/metrics"
)

// entry is one registered metric; exactly one of c, g, h is set.
type entry struct {
	def *metrics.Def
	c   *prometheus.CounterVec
	g   *prometheus.GaugeVec
	h   *prometheus.HistogramVec
}

// Recorder records into a private Prometheus registry. Safe for concurrent
// use: its maps are built in New and only read afterwards.
type Recorder struct {
	reg     *prometheus.Registry
	entries map[string]entry
	unknown prometheus.Counter
	dropped *prometheus.CounterVec
}

var _ metrics.Recorder = (*Recorder)(nil)

// New returns a Recorder with every metrics.Catalog entry registered in a
// fresh registry.
func New() *Recorder {
	return newFor(metrics.Catalog)
}

// newFor registers defs; MetricsUnknown and MetricsDropped must be among them.
func newFor(defs []metrics.Def) *Recorder {
	r := &Recorder{reg: prometheus.NewRegistry(), entries: make(map[string]entry, len(defs))}
	for i := range defs {
		d := &defs[i]
		e := entry{def: d}
		switch d.Kind {
		case metrics.Counter:
			e.c = prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
			r.reg.MustRegister(e.c)
		case metrics.Gauge:
			e.g = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
			r.reg.MustRegister(e.g)
		case metrics.Histogram:
			e.h = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: d.Buckets}, d.Labels)
			r.reg.MustRegister(e.h)
		default:
			continue
		}
		r.entries[d.Name] = e
	}
	// The self-metrics are catalogued; resolve them once so recording a drop cannot fail.
	r.unknown = r.entries[metrics.MetricsUnknown].c.WithLabelValues()
	r.dropped = r.entries[metrics.MetricsDropped].c
	// Pre-create the unknown counter and every drop reason at 0 so they are visible before the first bug.
	for _, reason := range []string{metrics.DropOddLabels, metrics.DropUnknownLabel, metrics.DropLabelValue,
		metrics.DropInvalidValue, metrics.DropKind} {
		r.dropped.WithLabelValues(reason)
	}
	// Label-less counters and gauges exist from the start (at 0), so /metrics
	// shows them before the first event.
	for _, e := range r.entries {
		if len(e.def.Labels) > 0 {
			continue
		}
		switch {
		case e.c != nil:
			e.c.WithLabelValues()
		case e.g != nil:
			e.g.WithLabelValues()
		}
	}
	return r
}

// Handler serves the registry in the Prometheus exposition format (GET /metrics).
func (r *Recorder) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry returns the private registry (for tests and extra collectors).
func (r *Recorder) Registry() *prometheus.Registry { return r.reg }

// Add increments a Counter by v (v >= 0) or adjusts a Gauge by v.
func (r *Recorder) Add(name string, v float64, labels ...string) {
	e, vals, ok := r.resolve(name, v, labels)
	if !ok {
		return
	}
	switch {
	case e.c != nil:
		if v < 0 {
			r.drop(metrics.DropInvalidValue)
			return
		}
		if c, err := e.c.GetMetricWithLabelValues(vals...); err == nil {
			c.Add(v)
		} else {
			r.drop(metrics.DropLabelValue)
		}
	case e.g != nil:
		if g, err := e.g.GetMetricWithLabelValues(vals...); err == nil {
			g.Add(v)
		} else {
			r.drop(metrics.DropLabelValue)
		}
	default:
		r.drop(metrics.DropKind)
	}
}

// Set sets a Gauge to v.
func (r *Recorder) Set(name string, v float64, labels ...string) {
	e, vals, ok := r.resolve(name, v, labels)
	if !ok {
		return
	}
	if e.g == nil {
		r.drop(metrics.DropKind)
		return
	}
	if g, err := e.g.GetMetricWithLabelValues(vals...); err == nil {
		g.Set(v)
	} else {
		r.drop(metrics.DropLabelValue)
	}
}

// Observe records v in a Histogram.
func (r *Recorder) Observe(name string, v float64, labels ...string) {
	e, vals, ok := r.resolve(name, v, labels)
	if !ok {
		return
	}
	if e.h == nil {
		r.drop(metrics.DropKind)
		return
	}
	if h, err := e.h.GetMetricWithLabelValues(vals...); err == nil {
		h.Observe(v)
	} else {
		r.drop(metrics.DropLabelValue)
	}
}

// Flush does nothing: Prometheus pulls. It returns nil.
func (r *Recorder) Flush(context.Context) error { return nil }

// resolve finds the entry and its label values, counting any reason to drop the call.
func (r *Recorder) resolve(name string, v float64, labels []string) (entry, []string, bool) {
	e, ok := r.entries[name]
	if !ok {
		r.unknown.Inc()
		return entry{}, nil, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		r.drop(metrics.DropInvalidValue)
		return entry{}, nil, false
	}
	vals, reason := e.def.Resolve(labels)
	if reason != "" {
		r.drop(reason)
		return entry{}, nil, false
	}
	return e, vals[:len(e.def.Labels)], true
}

func (r *Recorder) drop(reason string) {
	r.dropped.WithLabelValues(reason).Inc()
}
