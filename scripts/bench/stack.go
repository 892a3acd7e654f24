package main

// stack.go is the bench's one point of contact with the product's wiring
// (shared/wiring/app, shared/wiring/handlers): it builds the local stack the way the local
// runner (scripts/localcloud) does — SQLite store and embedded queue on one
// file, the API as API Gateway calls the orderapi function, the advancer's
// queue trigger and the relay and recovery timers from triggers.yaml — with
// counters on the queue port, the store's transactions and every function
// invocation. If the wiring changes, this is the file to adapt.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/mqtrigger"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// stack is a running local stack with its counters.
type stack struct {
	a   *app.App
	srv *httptest.Server
	tf  triggers.File
	q   *countingQueue
	db  *sql.DB      // a read-only handle on the file, for the bench's own polling (never the store's writer)
	tx  atomic.Int64 // store transactions (InTx and View)
	st  store.Store  // the store the App runs on (the bench reads the final state through it)
	inv *invocations
	// concurrency bounds the advancer invocations in flight (mqtrigger).
	concurrency int
	stop        context.CancelFunc
	wg          sync.WaitGroup
}

// invocations counts function invocations and their wall time.
type invocations struct {
	mu   sync.Mutex
	n    map[string]int
	dur  map[string]time.Duration
	bill map[string]time.Duration // each rounded up to 100 ms, as Cloud Functions bills
}

func (iv *invocations) add(name string, d time.Duration) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	iv.n[name]++
	iv.dur[name] += d
	iv.bill[name] += (d + 100*time.Millisecond - 1).Truncate(100 * time.Millisecond)
}

// newStack builds the stack in dir and starts its triggers.
func newStack(dir string, stock map[string]int64, concurrency int) *stack {
	ctx := context.Background()
	s := &stack{concurrency: concurrency,
		inv: &invocations{n: map[string]int{}, dur: map[string]time.Duration{}, bill: map[string]time.Duration{}}}
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(dir, "e2e.db")
	cfg.QueueSQLite = cfg.SQLitePath
	cfg.LogLevel = "error"
	st, err := sqlitestore.Open(ctx, cfg.SQLitePath, sqlitestore.Config{OnTx: func(bool) { s.tx.Add(1) }})
	must(err)
	s.db, err = sql.Open("sqlite", "file:"+cfg.SQLitePath+"?mode=ro&_pragma=busy_timeout(10000)")
	must(err)
	inner, err := sqlitequeue.New(st.DB(), sqlitequeue.Config{NewID: localwiring.NewID})
	must(err)
	s.q = &countingQueue{Queue: inner, inner: inner}
	s.st = st
	s.a, err = app.New(ctx, cfg, app.Use(app.Ports{Store: st, Queue: s.q, NewID: localwiring.NewID}), app.Options{Log: app.NewLogger(os.Stderr, "error")})
	must(err)
	s.tf, err = triggers.Load("triggers/triggers.yaml")
	must(err)
	must(s.a.EnsureQueues(ctx, s.tf.Queues))
	must(s.a.Commands.Stock.Seed(ctx, stock))
	s.q.reset()
	s.tx.Store(0)
	s.srv = httptest.NewServer(http.HandlerFunc(s.api))
	run, stop := context.WithCancel(ctx)
	s.stop = stop
	for _, t := range s.tf.Timers {
		period, _ := t.Period()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				select {
				case <-run.Done():
					return
				case <-tick.C:
				}
				s.invoke(run, t.Function, yc.EncodeTimer(t.Name, t.Payload, time.Now()))
			}
		}()
	}
	for _, qt := range s.tf.QueueTriggers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.queueLoop(run, qt)
		}()
	}
	return s
}

// close stops the triggers and the server and closes the App.
func (s *stack) close() {
	s.stop()
	s.wg.Wait()
	s.srv.Close()
	_ = s.db.Close()
	_ = s.a.Close()
}

// api serves a request as API Gateway calls the orderapi function.
func (s *stack) api(w http.ResponseWriter, r *http.Request) {
	ev, err := yc.NewHTTPRequestEvent(r, 3_500_000)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	raw, _ := json.Marshal(ev)
	t0 := time.Now()
	resp, err := handlers.OrderAPI(yc.WithInvocation(r.Context(), "bench", "orderapi"), s.a, raw)
	s.inv.add("orderapi", time.Since(t0))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_ = yc.WriteHTTPResponse(w, *resp)
}

func (s *stack) invoke(ctx context.Context, name string, raw []byte) error {
	t0 := time.Now()
	_, err := handlers.Registry[name](yc.WithInvocation(ctx, "bench", name), s.a, raw)
	s.inv.add(name, time.Since(t0))
	return err
}

// queueLoop plays a Message Queue trigger as the local runner does
// (shared/transport/mqtrigger, up to s.concurrency invocations in flight).
func (s *stack) queueLoop(ctx context.Context, qt triggers.QueueTrigger) {
	tr, err := mqtrigger.New(mqtrigger.Config{
		Queue: s.q, URL: s.a.Config.QueueURLs.SagaCommands, QueueID: "yrn:yc:ymq:ru-central1:local:" + qt.Queue,
		BatchSize: qt.BatchSize, VisibilityTimeout: time.Duration(qt.VisibilityTimeoutSeconds) * time.Second,
		Concurrency: s.concurrency, Name: qt.Name,
		Invoke: func(ctx context.Context, raw []byte) error { return s.invoke(ctx, qt.Function, raw) },
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: queue trigger %s not started: %v\n", qt.Name, err)
		return
	}
	tr.Run(ctx)
}

// countingQueue decorates the queue port and counts the requests a Message
// Queue would bill: SendMessageBatch calls (and the messages in them),
// ReceiveMessage calls with and without messages, DeleteMessage calls.
type countingQueue struct {
	queue.Queue
	inner                                         *sqlitequeue.Queue
	sends, sent, receives, emptyReceives, deletes atomic.Int64
}

func (q *countingQueue) reset() {
	q.sends.Store(0)
	q.sent.Store(0)
	q.receives.Store(0)
	q.emptyReceives.Store(0)
	q.deletes.Store(0)
}

func (q *countingQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	q.sends.Add(1)
	q.sent.Add(int64(len(msgs)))
	return q.Queue.SendBatch(ctx, url, msgs)
}

// SendInTx forwards the embedded queue's in-transaction send (the local
// fast path, relay.TxSender) and counts it as the SendMessageBatch call it
// is in the cloud, where the same rows go through Message Queue.
func (q *countingQueue) SendInTx(ctx context.Context, tx store.Tx, url string, msgs []queue.OutMessage) ([]queue.SendResult, bool, error) {
	res, ok, err := q.inner.SendInTx(ctx, tx, url, msgs)
	if ok {
		q.sends.Add(1)
		q.sent.Add(int64(len(msgs)))
	}
	return res, ok, err
}

// Committed implements relay.TxSender.
func (q *countingQueue) Committed(urls ...string) { q.inner.Committed(urls...) }

func (q *countingQueue) Receive(ctx context.Context, url string, opts queue.ReceiveOptions) ([]queue.Message, error) {
	m, err := q.Queue.Receive(ctx, url, opts)
	if len(m) > 0 {
		q.receives.Add(1)
	} else {
		q.emptyReceives.Add(1)
	}
	return m, err
}

// DeleteBatch forwards the embedded queue's batch delete (the local
// trigger's acknowledgement) and counts each message.
func (q *countingQueue) DeleteBatch(ctx context.Context, url string, handles []string) error {
	q.deletes.Add(int64(len(handles)))
	return q.inner.DeleteBatch(ctx, url, handles)
}

func (q *countingQueue) Delete(ctx context.Context, url, handle string) error {
	q.deletes.Add(1)
	return q.Queue.Delete(ctx, url, handle)
}
