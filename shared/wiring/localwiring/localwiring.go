// Package localwiring is the composition root of the local target: it opens
// the SQLite store, the embedded queue and Prometheus metrics for the local
// runner (scripts/localcloud), the tests and the benchmarks. The cloud
// functions never import it, so no zip carries SQLite; the local runner
// imports no cloud adapter, so its first build compiles no YDB, Yandex Cloud
// or AWS SDK. A test (shared/checks/wiringtest) holds both rules. See docs/wiring.md.
package localwiring

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"ordersaga/shared/adapters/prommetrics"
	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// Open opens the local adapters cfg names; it is an app.Opener.
func Open(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
	m, h, err := OpenMetrics(cfg)
	if err != nil {
		return app.Ports{}, err
	}
	st, err := OpenStore(ctx, cfg, env)
	if err != nil {
		return app.Ports{}, err
	}
	q, closeQ, err := OpenQueue(cfg, st, env)
	if err != nil {
		return app.Ports{}, errors.Join(err, st.Close())
	}
	return app.Ports{Store: st, Queue: q, Metrics: m, MetricsHandler: h, NewID: NewID, Database: Probe(st),
		Close: func() error { return errors.Join(closeQ(), st.Close()) }}, nil
}

// NewID returns a time-ordered UUID (version 7, RFC 9562): rows the local
// target writes one after another get increasing keys, so SQLite appends
// them to the right-most page of each B-tree instead of dirtying a random
// page per row and index (a group commit then writes a handful of pages
// instead of about fifteen per order). The 74 random bits keep ids
// unguessable; an id does reveal when it was made (not a secret here: the
// order's created_at says as much). YDB wants the opposite — random keys,
// so writes spread over partitions — and the cloud target keeps UUIDv4.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// OpenStore opens the SQLite store (creating and migrating the file).
func OpenStore(ctx context.Context, cfg config.Config, env app.Env) (store.Store, error) {
	if cfg.Store != config.StoreSQLite {
		return nil, notCarried("ORDERSAGA_STORE", cfg.Store, "sqlite")
	}
	s, err := sqlitestore.Open(ctx, cfg.SQLitePath, sqlitestore.Config{Now: env.Now, OnTx: env.OnTx})
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", cfg.SQLitePath, err)
	}
	return s, nil
}

// OpenQueue opens the embedded queue. When it lives in the store's file it
// shares the store's single writer connection, so the queue and the store
// never contend in SQLite's busy handler. The returned func closes it.
func OpenQueue(cfg config.Config, st store.Store, env app.Env) (queue.Queue, func() error, error) {
	if cfg.Queue != config.QueueSQLite {
		return nil, nil, notCarried("ORDERSAGA_QUEUE", cfg.Queue, "sqlite")
	}
	qc := sqlitequeue.Config{NewID: NewID, Now: env.Now}
	if s, ok := st.(*sqlitestore.Store); ok && cfg.QueueSQLite == cfg.SQLitePath {
		q, err := sqlitequeue.New(s.DB(), qc)
		if err != nil {
			return nil, nil, fmt.Errorf("open embedded queue: %w", err)
		}
		return q, q.Close, nil
	}
	q, err := sqlitequeue.Open(cfg.QueueSQLite, qc)
	if err != nil {
		return nil, nil, fmt.Errorf("open embedded queue %s: %w", cfg.QueueSQLite, err)
	}
	return q, q.Close, nil
}

// OpenMetrics builds the metrics recorder: Prometheus (with its /metrics
// handler) or none.
func OpenMetrics(cfg config.Config) (metrics.Recorder, http.Handler, error) {
	switch cfg.Metrics {
	case "prometheus":
		r := prommetrics.New()
		return r, r.Handler(), nil
	case "none":
		return metrics.Nop{}, nil, nil
	default:
		return nil, nil, notCarried("ORDERSAGA_METRICS", cfg.Metrics, "prometheus or none")
	}
}

func notCarried(name, got, want string) error {
	return fmt.Errorf("%s=%s: the local build carries only the local adapters (%s); "+
		"the local runner with the cloud adapters is `go run ./scripts/localcloud/cloudadapters` (docs/wiring.md)", name, got, want)
}
