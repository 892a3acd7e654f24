// Package metrics is ordersaga's metrics port: a small Recorder interface
// that use cases reach only through their hooks (wired at start-up), plus the
// Catalog, the one list of every metric the product emits.
//
// Labels are passed as alternating key, value pairs:
//
//	r.Add(metrics.SagaSteps, 1, "step", "reserve_stock", "direction", "forward", "status", "succeeded")
//
// Keys must be declared in the metric's Def.Labels (any order); missing keys
// get the empty value. Recorders never panic and never return errors from
// Add, Set or Observe: a call that cannot be recorded (unknown name, odd
// label count, undeclared key, NaN, wrong method for the kind) is dropped
// and counted in MetricsUnknown or MetricsDropped{reason}, without logging,
// so a hot path cannot flood the log.
//
// Adapters: prommetrics (Prometheus exposition for local runs) and ycmetrics
// (Yandex Monitoring custom metrics pushed at the end of each invocation).
package metrics

import "context"

// Recorder records metric values. Implementations are safe for concurrent use.
//
// Add, Set and Observe never block on I/O, never panic and never fail the
// caller; invalid calls are dropped and counted (see the package doc).
type Recorder interface {
	// Add adds v (>= 0 for counters) to a Counter, or adjusts a Gauge by v.
	Add(name string, v float64, labels ...string)
	// Set sets a Gauge to v.
	Set(name string, v float64, labels ...string)
	// Observe records one observation v in a Histogram.
	Observe(name string, v float64, labels ...string)
	// Flush delivers what was recorded, if the adapter pushes (ycmetrics);
	// pull adapters (prommetrics) return nil at once. It is bounded by the
	// adapter's own timeout and ctx. Its error (kinds Transient,
	// Unauthenticated, Forbidden, Invalid, Internal) is informational only:
	// callers log or ignore it and never fail an invocation because of it.
	// Not idempotent for push adapters (each call sends what accumulated
	// since the previous one).
	Flush(ctx context.Context) error
}

// Kind is a metric's type.
type Kind uint8

// The kinds.
const (
	// Counter only goes up; Add it per-event increments.
	Counter Kind = iota + 1
	// Gauge is a current value; Set it.
	Gauge
	// Histogram is a distribution of observations in Def.Buckets.
	Histogram
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "unknown"
}

// Def describes one metric of the Catalog.
type Def struct {
	// Name is the metric name, a valid Prometheus name (counters end in _total).
	Name string
	// Help is the one-line description shown in exposition and dashboards.
	Help string
	// Kind is Counter, Gauge or Histogram.
	Kind Kind
	// Labels are the label keys, in canonical order (at most MaxLabels).
	Labels []string
	// Buckets are a Histogram's upper bounds, ascending (nil otherwise).
	Buckets []float64
}

// Nop discards everything. Its zero value is ready to use.
type Nop struct{}

var _ Recorder = Nop{}

// Add does nothing.
func (Nop) Add(string, float64, ...string) {}

// Set does nothing.
func (Nop) Set(string, float64, ...string) {}

// Observe does nothing.
func (Nop) Observe(string, float64, ...string) {}

// Flush does nothing and returns nil.
func (Nop) Flush(context.Context) error { return nil }
