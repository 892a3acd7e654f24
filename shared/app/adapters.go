package app

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/config"
	"ordersaga/shared/queue"
	"ordersaga/shared/sqlitequeue"
	"ordersaga/shared/sqlitestore"
	"ordersaga/shared/store"
	"ordersaga/shared/ydbstore"
	"ordersaga/shared/ymq"
)

func openStore(ctx context.Context, cfg config.Config, now func() time.Time, onTx func(bool)) (store.Store, error) {
	switch cfg.Store {
	case config.StoreSQLite:
		s, err := sqlitestore.Open(ctx, cfg.SQLitePath, sqlitestore.Options{Now: now, OnTx: onTx})
		if err != nil {
			return nil, fmt.Errorf("open SQLite store %s: %w", cfg.SQLitePath, err)
		}
		return s, nil
	case config.StoreYDB:
		// One driver per function instance: App is built once at cold start.
		s, err := ydbstore.Open(ctx, ydbstore.Config{
			ConnectionString: cfg.YDB.ConnectionString, Auth: cfg.YDB.Auth, Token: cfg.YDB.Token,
			Now: now, OnTx: onTx, OutboxRetention: cfg.Relay.Retention,
		})
		if err != nil {
			return nil, fmt.Errorf("open YDB store: %w", err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("store %q is not supported by this build", cfg.Store)
	}
}

func openQueue(ctx context.Context, cfg config.Config, st store.Store, now func() time.Time) (queue.Queue, func() error, error) {
	switch cfg.Queue {
	case config.QueueSQLite:
		if s, ok := st.(*sqlitestore.Store); ok && cfg.QueueSQLite == cfg.SQLitePath {
			// Same file: share the store's single writer connection, so the
			// queue and the store never contend in SQLite's busy handler.
			q, err := sqlitequeue.New(s.DB(), sqlitequeue.WithClock(now))
			if err != nil {
				return nil, nil, fmt.Errorf("open embedded queue: %w", err)
			}
			return q, q.Close, nil
		}
		q, err := sqlitequeue.Open(cfg.QueueSQLite, sqlitequeue.WithClock(now))
		if err != nil {
			return nil, nil, fmt.Errorf("open embedded queue %s: %w", cfg.QueueSQLite, err)
		}
		return q, q.Close, nil
	case config.QueueYMQ:
		q, err := ymq.New(ymq.Config{
			Endpoint: cfg.YMQ.Endpoint, Region: cfg.YMQ.Region,
			AccessKeyID: cfg.YMQ.AccessKeyID, SecretAccessKey: cfg.YMQ.SecretAccessKey,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("open Message Queue client: %w", err)
		}
		return q, nil, nil
	default:
		return nil, nil, fmt.Errorf("queue %q is not supported by this build", cfg.Queue)
	}
}
