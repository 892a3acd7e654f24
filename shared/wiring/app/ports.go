package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
)

// Ports are the adapters a target plugs into the App. Package app imports
// no adapter: each target's composition root opens its own (see
// docs/wiring.md) — shared/wiring/cloudwiring for the cloud functions (YDB, Message
// Queue, Yandex Monitoring), shared/wiring/localwiring for the local runner, the
// tests and the benchmarks (SQLite, the embedded queue, Prometheus) — so a
// build carries only the adapters of its target.
type Ports struct {
	Store store.Store
	Queue queue.Queue
	// Metrics records the metric catalogue of package metrics (nil:
	// metrics.Nop). MetricsHandler serves its exposition when the recorder
	// has one (Prometheus); the App does not serve it itself.
	Metrics        metrics.Recorder
	MetricsHandler http.Handler
	// Close, if set, releases the adapters; App.Close calls it last.
	Close func() error
	// NewID, if set, names the App's rows (orders, sagas, outbox rows, dead
	// letters) instead of random UUIDs; Options.NewID overrides it. The
	// local target sets time-ordered UUIDs (version 7), which SQLite's
	// B-trees append instead of scattering (localwiring.NewID); the cloud
	// keeps random ones, which spread YDB's writes over its partitions.
	NewID func() string
	// Database probes the store's clock and schema for the self-check
	// (nil: the self-check reports that this target cannot prove them).
	Database selfcheck.Database
}

// Env is what an Opener gets besides the configuration: the App's clock and
// logger, and the transaction counter of Options.OnTx.
type Env struct {
	Now  func() time.Time
	Log  *slog.Logger
	OnTx func(readOnly bool)
}

// Opener opens the adapters cfg names. Each target has its own; it fails
// with a message naming the setting when cfg names an adapter the target
// does not carry.
type Opener func(ctx context.Context, cfg config.Config, env Env) (Ports, error)

// Use returns an Opener that hands out ports the caller opened (chaos runs,
// tests that decorate a port). The App closes them only if p.Close is set.
func Use(p Ports) Opener {
	return func(context.Context, config.Config, Env) (Ports, error) { return p, nil }
}

// FlushMetrics pushes what this invocation recorded (Yandex Monitoring);
// a failure is logged by the recorder and never fails the invocation.
func (a *App) FlushMetrics(ctx context.Context) {
	_ = a.metrics.Flush(ctx)
}
