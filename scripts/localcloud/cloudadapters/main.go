// Command cloudadapters is the local runner with the cloud adapters too: the
// same runner as scripts/localcloud, whose store and queue can also be a real
// YDB database (ORDERSAGA_STORE=ydb) and Yandex Message Queue or an SQS
// emulator (ORDERSAGA_QUEUE=ymq), chosen per port by the same environment
// variables the functions read. It is an explicit opt-in: its build compiles
// the YDB, Yandex Cloud and AWS SDKs, which the default runner does not.
// Metrics stay Prometheus (or none). See docs/wiring.md.
//
//	ORDERSAGA_STORE=ydb YDB_CONNECTION_STRING=grpc://localhost:2136/local YDB_AUTH=anonymous \
//	  go run ./scripts/localcloud/cloudadapters
package main

import (
	"context"
	"errors"
	"os"

	"ordersaga/scripts/localcloud/runner"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/cloudwiring"
	"ordersaga/shared/wiring/localwiring"
)

func main() {
	os.Exit(runner.Main(runner.Command{
		Name: "cloudadapters", Open: open,
		Adapters: "SQLite or YDB store, embedded queue or Message Queue, Prometheus",
	}, os.Args[1:], os.Stdout, os.Stderr))
}

// open picks each port's adapter from the configuration: local or cloud.
func open(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
	m, h, err := localwiring.OpenMetrics(cfg)
	if err != nil {
		return app.Ports{}, err
	}
	var st store.Store
	if cfg.Store == config.StoreYDB {
		st, err = cloudwiring.OpenStore(ctx, cfg, env)
	} else {
		st, err = localwiring.OpenStore(ctx, cfg, env)
	}
	if err != nil {
		return app.Ports{}, err
	}
	var q queue.Queue
	closeQ := func() error { return nil }
	if cfg.Queue == config.QueueYMQ {
		q, err = cloudwiring.OpenQueue(cfg)
	} else {
		q, closeQ, err = localwiring.OpenQueue(cfg, st, env)
	}
	if err != nil {
		return app.Ports{}, errors.Join(err, st.Close())
	}
	return app.Ports{Store: st, Queue: q, Metrics: m, MetricsHandler: h,
		Close: func() error { return errors.Join(closeQ(), st.Close()) }}, nil
}
