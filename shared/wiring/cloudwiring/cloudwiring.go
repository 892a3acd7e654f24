// Package cloudwiring is the composition root of the cloud functions: it
// opens the YDB store, the Yandex Message Queue client and Yandex Monitoring
// metrics. Only functions/* (and the local runner's explicit cloud-adapter
// build, scripts/localcloud/cloudadapters) import it, so the local runner's
// default build compiles none of the YDB, Yandex Cloud or AWS SDKs, and no
// zip carries SQLite. A test (shared/checks/wiringtest) holds both rules. See
// docs/wiring.md.
package cloudwiring

import (
	"context"
	"errors"
	"fmt"

	"ordersaga/shared/adapters/ycmetrics"
	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/adapters/ymq"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// Open opens the cloud adapters cfg names; it is an app.Opener.
func Open(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
	// Every setting this build cannot serve is named at once, before YDB
	// is dialled (a function deployed without its cloud configuration fails
	// its cold start with this message).
	var wrong []error
	if cfg.Store != config.StoreYDB {
		wrong = append(wrong, notCarried("ORDERSAGA_STORE", cfg.Store, "ydb"))
	}
	if cfg.Queue != config.QueueYMQ {
		wrong = append(wrong, notCarried("ORDERSAGA_QUEUE", cfg.Queue, "ymq"))
	}
	if len(wrong) > 0 {
		return app.Ports{}, errors.Join(wrong...)
	}
	m, err := OpenMetrics(cfg, env)
	if err != nil {
		return app.Ports{}, err
	}
	st, err := OpenStore(ctx, cfg, env)
	if err != nil {
		return app.Ports{}, err
	}
	q, err := OpenQueue(cfg)
	if err != nil {
		return app.Ports{}, errors.Join(err, st.Close())
	}
	return app.Ports{Store: st, Queue: q, Metrics: m, Close: st.Close, Database: Probe(cfg, st)}, nil
}

// OpenStore opens the YDB store: one driver per function instance (the App
// is built once, at cold start).
func OpenStore(ctx context.Context, cfg config.Config, env app.Env) (store.Store, error) {
	if cfg.Store != config.StoreYDB {
		return nil, notCarried("ORDERSAGA_STORE", cfg.Store, "ydb")
	}
	s, err := ydbstore.Open(ctx, ydbstore.Config{
		ConnectionString: cfg.YDB.ConnectionString, Auth: cfg.YDB.Auth, Token: cfg.YDB.Token,
		Now: env.Now, OnTx: env.OnTx, OutboxRetention: cfg.Relay.Retention,
	})
	if err != nil {
		return nil, fmt.Errorf("open YDB store: %w", err)
	}
	return s, nil
}

// OpenQueue builds the Message Queue client (it holds no connection to
// close).
func OpenQueue(cfg config.Config) (queue.Queue, error) {
	if cfg.Queue != config.QueueYMQ {
		return nil, notCarried("ORDERSAGA_QUEUE", cfg.Queue, "ymq")
	}
	q, err := ymq.New(ymq.Config{
		Endpoint: cfg.YMQ.Endpoint, Region: cfg.YMQ.Region,
		AccessKeyID: cfg.YMQ.AccessKeyID, SecretAccessKey: cfg.YMQ.SecretAccessKey,
	})
	if err != nil {
		return nil, fmt.Errorf("open Message Queue client: %w", err)
	}
	return q, nil
}

// OpenMetrics builds the Yandex Monitoring recorder (pushed once per
// invocation by the function middleware), or none.
func OpenMetrics(cfg config.Config, env app.Env) (metrics.Recorder, error) {
	switch cfg.Metrics {
	case "monitoring":
		r, err := ycmetrics.New(ycmetrics.Config{
			FolderID: cfg.Monitoring.FolderID, Endpoint: cfg.Monitoring.Endpoint, Function: cfg.Function,
			Tokens: ycmetrics.InstanceServiceAccount(), Now: env.Now, Log: env.Log,
		})
		if err != nil {
			return nil, fmt.Errorf("Yandex Monitoring metrics: %w", err)
		}
		return r, nil
	case "none":
		return metrics.Nop{}, nil
	default:
		return nil, notCarried("ORDERSAGA_METRICS", cfg.Metrics, "monitoring or none")
	}
}

func notCarried(name, got, want string) error {
	return fmt.Errorf("%s=%s: the cloud functions carry only the cloud adapters (%s); see docs/wiring.md", name, got, want)
}
