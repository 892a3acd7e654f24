// Package app builds every component of ordersaga from one validated
// Config. The cloud functions and the local runner use it alike, so both run
// the same wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/adminapi"
	"ordersaga/shared/config"
	"ordersaga/shared/dlq"
	"ordersaga/shared/httpapi"
	"ordersaga/shared/identity"
	"ordersaga/shared/metrics"
	"ordersaga/shared/orchestrator"
	"ordersaga/shared/orders"
	"ordersaga/shared/outbox"
	"ordersaga/shared/payments"
	"ordersaga/shared/paymentsim"
	"ordersaga/shared/queue"
	"ordersaga/shared/redrive"
	"ordersaga/shared/relay"
	"ordersaga/shared/resilience"
	"ordersaga/shared/stock"
	"ordersaga/shared/store"
	"ordersaga/shared/triggers"
	"ordersaga/shared/yc"
)

// App holds the wired components. Fields are read-only after New.
type App struct {
	Config config.Config
	Log    *slog.Logger
	Store  store.Store
	Queue  queue.Queue
	Orders *orders.Service
	Relay  *relay.Relay
	HTTP   http.Handler
	Now    func() time.Time
	NewID  func() string

	Stock         *stock.Service
	Payments      *payments.Service
	PaymentSim    *paymentsim.Sim // nil when an external provider is configured
	PaymentPolicy *resilience.Policy
	Advancer      *orchestrator.Advancer
	Recovery      *orchestrator.Recovery
	Redrive       *redrive.Service

	// Metrics records the metric catalogue of package metrics; MetricsHandler
	// serves GET /metrics when the recorder is Prometheus (nil otherwise).
	Metrics        metrics.Recorder
	MetricsHandler http.Handler

	hooks hooks

	closers []func() error
}

// Options override parts of the wiring (tests, the local runner, chaos runs).
type Options struct {
	Now   func() time.Time
	NewID func() string
	Log   *slog.Logger
	// Store and Queue, when set, are used instead of opening them from Config
	// (the App does not close them).
	Store store.Store
	Queue queue.Queue
	// OnTx is passed to the store adapter (transaction counting).
	OnTx func(readOnly bool)
	// Owner names this instance in leases (default: a random id).
	Owner string
}

// New builds the App. It fails with a message naming what is wrong.
func New(ctx context.Context, cfg config.Config, opt Options) (*App, error) {
	a := &App{Config: cfg, Log: opt.Log, Now: opt.Now, NewID: opt.NewID}
	if a.Log == nil {
		a.Log = NewLogger(os.Stderr, cfg.LogLevel)
	}
	if a.Now == nil {
		// Microseconds: the precision both stores keep, so a time read back
		// equals the time written (and replayed bodies match GET bodies).
		a.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if a.NewID == nil {
		a.NewID = func() string { return uuid.NewString() }
	}
	owner := opt.Owner
	if owner == "" {
		owner = "instance-" + a.NewID()[:8]
	}
	var err error
	if a.Metrics, a.MetricsHandler, err = openMetrics(cfg, a); err != nil {
		return nil, err
	}
	a.hooks = hooks{m: a.Metrics}
	if a.Store = opt.Store; a.Store == nil {
		if a.Store, err = openStore(ctx, cfg, a.Now, opt.OnTx); err != nil {
			return nil, err
		}
		a.closers = append(a.closers, a.Store.Close)
	}
	if a.Queue = opt.Queue; a.Queue == nil {
		q, closeQ, err := openQueue(ctx, cfg, a.Store, a.Now)
		if err != nil {
			_ = a.Close()
			return nil, err
		}
		a.Queue = q
		if closeQ != nil {
			a.closers = append(a.closers, closeQ)
		}
	}
	a.Relay = &relay.Relay{
		Store: a.Store, Queue: a.Queue, Owner: owner,
		URLs: map[string]string{
			outbox.DestSagaCommands: cfg.QueueURLs.SagaCommands,
			outbox.DestOrderEvents:  cfg.QueueURLs.OrderEvents,
		},
		Shards: cfg.Relay.Shards, BatchSize: cfg.Relay.BatchSize, MaxAttempts: cfg.Relay.MaxAttempts, Lease: cfg.Relay.Lease,
		Backoff: resilience.Backoff{Base: cfg.Relay.BackoffBase, Cap: cfg.Relay.BackoffCap},
		Now:     a.Now, NewID: a.NewID, Log: a.Log,
	}
	a.hooks.relayHooks(a.Relay)
	a.Orders = &orders.Service{
		Store: a.Store, Dispatcher: a.Relay, Shards: cfg.Relay.Shards,
		Now: a.Now, NewID: a.NewID, Log: a.Log, OnIdempotency: a.hooks.idempotency,
	}
	a.wireSaga(cfg, owner)
	auth, err := authenticator(cfg)
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.HTTP = httpapi.NewHandler(httpapi.Deps{
		Orders: a.Orders, Auth: auth, Log: a.Log,
		RequestID: func(r *http.Request) string { return yc.RequestID(r.Context()) },
		OnRequest: a.hooks.httpRequest,
		Admin:     adminapi.NewHandler(a.Redrive, auth, adminapi.WithStock(a.Stock)),
	})
	return a, nil
}

func authenticator(cfg config.Config) (identity.Authenticator, error) {
	if cfg.Auth == config.AuthGateway {
		return identity.Gateway{Authorizer: yc.AuthorizerFromContext}, nil
	}
	t, err := identity.ParseTokens(cfg.AuthTokens)
	if err != nil {
		return nil, fmt.Errorf("ORDERSAGA_AUTH_TOKENS: %w", err)
	}
	return t, nil
}

// Close releases what New opened, in reverse order.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// NewLogger returns a JSON slog logger that Cloud Logging parses (level,
// msg, fields on one line).
func NewLogger(w *os.File, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// EnsureQueues creates the queues of triggers.yaml (local runs and tests;
// in the cloud Terraform creates them), dead-letter queues first so that
// redrive policies can name them.
func (a *App) EnsureQueues(ctx context.Context, qs []triggers.Queue) error {
	urls := map[string]string{}
	pending := append([]triggers.Queue(nil), qs...)
	for len(pending) > 0 {
		progressed := false
		rest := pending[:0]
		for _, q := range pending {
			if q.DeadLetterQueue != "" && urls[q.DeadLetterQueue] == "" {
				rest = append(rest, q)
				continue
			}
			url, err := a.Queue.Ensure(ctx, queue.QueueSpec{
				Name: q.Name, VisibilityTimeout: time.Duration(q.VisibilityTimeoutSeconds) * time.Second,
				MaxReceiveCount: q.MaxReceiveCount, DeadLetterQueueURL: urls[q.DeadLetterQueue],
			})
			if err != nil {
				return fmt.Errorf("ensure queue %s: %w", q.Name, err)
			}
			urls[q.Name], progressed = url, true
		}
		if !progressed {
			return fmt.Errorf("queues with unresolvable dead-letter queues: %d", len(rest))
		}
		pending = rest
	}
	return nil
}

// RecordRelay records the outbox gauges of a relay run.
func (a *App) RecordRelay(rep relay.Report) { a.hooks.backlog(rep) }

// RecordRecovery records the counters of a recovery run.
func (a *App) RecordRecovery(rep orchestrator.Report) { a.hooks.recovery(rep) }

// RecordRedrive counts one operator action and its outcome.
func (a *App) RecordRedrive(action, outcome string) { a.hooks.redriveAction(action, outcome) }

// RecordDeadLetterSizes sets dlq_size for each dead-letter source (open
// entries) and for each YMQ dead-letter queue (messages not yet ingested).
// It reads only open entries, through the status index, a bounded number of
// pages: resolved and discarded history (the bulk of the table) is never read
// on the timer's path. A count at the bound means "at least".
func (a *App) RecordDeadLetterSizes(ctx context.Context) {
	const pageSize, maxPages = 1000, 5
	for _, src := range []dlq.Source{dlq.SourceQueue, dlq.SourceOutbox, dlq.SourceSaga} {
		n, cursor := 0, ""
		err := a.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
			for page := 0; page < maxPages; page++ {
				list, next, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: src, Status: dlq.StatusOpen}, dlq.Page{Limit: pageSize, Cursor: cursor})
				if err != nil {
					return err
				}
				n += len(list)
				if cursor = next; cursor == "" {
					return nil
				}
			}
			return nil
		})
		if err != nil {
			a.Log.Warn("counting open dead letters failed", "source", src, "error", err)
			continue
		}
		a.Metrics.Set(metrics.DLQSize, float64(n), "queue", string(src))
	}
	if url := a.Config.QueueURLs.SagaCommandsDLQ; url != "" {
		if visible, inFlight, err := a.Queue.Depth(ctx, url); err == nil {
			a.Metrics.Set(metrics.DLQSize, float64(visible+inFlight), "queue", "saga-commands-dlq")
		}
	}
}
