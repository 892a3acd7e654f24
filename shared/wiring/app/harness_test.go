package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"ordersaga/shared/adapters/sqlitestore/sqlitetest"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// testEnv is a real App on a SQLite file behind a real HTTP server.
type testEnv struct {
	t       *testing.T
	app     *app.App
	ports   app.Ports // the local adapters the App runs on
	srv     *httptest.Server
	dbPath  string
	txCount atomic.Int64
	// before runs ahead of every write transaction of the advancer
	// (beforeAdvancerTx); nil runs nothing.
	before atomic.Pointer[func() error]
}

func newTestEnv(t *testing.T, mutate ...func(*config.Config, *app.Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(dir, "ordersaga.db")
	cfg.QueueSQLite = cfg.SQLitePath
	cfg.LogLevel = "error"
	env := &testEnv{t: t, dbPath: cfg.SQLitePath}
	opt := app.Options{OnTx: func(bool) { env.txCount.Add(1) },
		Advancer: func(c *orchestrator.AdvancerConfig) { c.Store = advancerStore{Store: c.Store, before: env.runBefore} }}
	for _, m := range mutate {
		m(&cfg, &opt)
	}
	open := func(ctx context.Context, cfg config.Config, e app.Env) (app.Ports, error) {
		p, err := localwiring.Open(ctx, cfg, e)
		env.ports = p
		return p, err
	}
	a, err := app.New(context.Background(), cfg, open, opt)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	env.app = a
	tf, err := triggers.Load("../../../triggers/triggers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureQueues(context.Background(), tf.Queues); err != nil {
		t.Fatalf("EnsureQueues: %v", err)
	}
	env.srv = httptest.NewServer(a.HTTP)
	t.Cleanup(func() {
		env.srv.Close()
		_ = a.Close()
	})
	return env
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (e *testEnv) do(method, path, token, key string, body []byte, hdr ...string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// rowCounts counts the rows of every table in the database file.
func (e *testEnv) rowCounts() map[string]int {
	e.t.Helper()
	return sqlitetest.RowCounts(e.t, e.dbPath)
}

// advancerStore is the advancer's store with before run ahead of every
// write transaction (a barrier, a panic); an error from before fails the
// transaction without starting it.
type advancerStore struct {
	store.Store
	before func() error
}

// InTx implements store.Store.
func (s advancerStore) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if err := s.before(); err != nil {
		return err
	}
	return s.Store.InTx(ctx, fn)
}

// beforeAdvancerTx runs before ahead of every write transaction of the
// App's advancer from now on (the advancer is built over advancerStore).
func (e *testEnv) beforeAdvancerTx(before func() error) { e.before.Store(&before) }

// runBefore runs the function beforeAdvancerTx set, if any.
func (e *testEnv) runBefore() error {
	if f := e.before.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// stocked makes n units of sku available. A new order reserves its stock
// in its own transaction: one without stock is cancelled there and leaves
// no saga command in the queue.
func (e *testEnv) stocked(sku string, n int64) *testEnv {
	e.t.Helper()
	if _, err := e.app.Commands.Stock.SetAvailable(context.Background(), "test", sku, n); err != nil {
		e.t.Fatal(err)
	}
	return e
}
