// Package app builds every use case of ordersaga from one validated Config
// and the adapters (Ports) of one target. The cloud functions and the local
// runner use it alike, so both run the same wiring; only the Opener that
// supplies the adapters differs (docs/wiring.md).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/breakerboard"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/queuesetup"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/adminapi"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/triggers"
)

// App holds the wired use cases, grouped as Commands (use cases that change
// state, and the jobs each function body runs) and Queries (use cases that
// only read). It builds them from the Config and exposes them; every
// decision, loop and limit lives in the use cases (shared/app). The store,
// the queue and the metrics recorder stay inside: a function body reaches
// them only through a use case. The use cases are built once by their
// constructors (Options can adjust their configuration first) and are not
// changed afterwards, except that a chaos run or a test may replace
// Commands.Advancer or Commands.Recovery before the first invocation; the
// jobs then call the replacement.
type App struct {
	Config config.Config
	Log    *slog.Logger
	Now    func() time.Time
	NewID  func() string

	// HTTP serves the API (orders, admin routes) as API Gateway calls it.
	HTTP     http.Handler
	Commands Commands
	Queries  Queries

	store   store.Store
	queue   queue.Queue
	metrics metrics.Recorder
	hooks   hooks
	sim     *paymentsim.Sim // the built-in payment provider, nil with an external one
	probe   selfcheck.Database

	closers []func() error
}

// Options override parts of the wiring (tests, the local runner, chaos runs).
type Options struct {
	Now   func() time.Time
	NewID func() string
	Log   *slog.Logger
	// OnTx is passed to the store adapter (transaction counting).
	OnTx func(readOnly bool)
	// Owner names this instance in leases (default: a random id).
	Owner string
	// Relay, Orders, Payments, Advancer and Recovery, if set, adjust a use
	// case's configuration before it is built (tests and chaos runs:
	// injected faults, seeded jitter, counters, a stand-in provider);
	// nothing is changed on a use case, or in Commands, after New.
	Relay    func(*relay.Config)
	Orders   func(*orders.Config)
	Payments func(*payments.Config)
	Advancer func(*orchestrator.AdvancerConfig)
	Recovery func(*orchestrator.RecoveryConfig)
}

// New opens the adapters with open and builds the App on them. It fails with
// a message naming what is wrong.
func New(ctx context.Context, cfg config.Config, open Opener, opt Options) (*App, error) {
	a := &App{Config: cfg, Log: opt.Log, Now: opt.Now, NewID: opt.NewID}
	if a.Log == nil {
		a.Log = NewLogger(os.Stderr, cfg.LogLevel)
	}
	if err := orchestrator.CheckBreakerThreshold(cfg.Payment.BreakerThreshold, orchestrator.CreateOrderSaga); err != nil {
		// Allowed (a test may keep the breaker closed on purpose), but a
		// lone order calls the provider more during an outage.
		a.Log.Warn("payment breaker threshold delays the breaker for a lone order", "error", err)
	}
	if a.Now == nil {
		// Microseconds: the precision both stores keep, so a time read back
		// equals the time written (and replayed bodies match GET bodies).
		a.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	owner := opt.Owner
	if owner == "" {
		// Random bits, whatever the ID generator: a time-ordered id's first
		// characters are the same for every instance started in the same
		// minute, and lease owners must differ.
		owner = "instance-" + uuid.NewString()[:8]
	}
	if open == nil {
		return nil, errors.New("app.New: no adapters (pass the target's Opener, e.g. localwiring.Open or cloudwiring.Open)")
	}
	p, err := open(ctx, cfg, Env{Now: a.Now, Log: a.Log, OnTx: opt.OnTx})
	if err != nil {
		return nil, err
	}
	if p.Close != nil {
		a.closers = append(a.closers, p.Close)
	}
	if p.Store == nil || p.Queue == nil {
		_ = a.Close()
		return nil, errors.New("app.New: the opener returned no store or no queue")
	}
	a.store, a.queue, a.metrics, a.probe = p.Store, p.Queue, p.Metrics, p.Database
	if a.NewID == nil {
		a.NewID = p.NewID
	}
	if a.NewID == nil {
		a.NewID = func() string { return uuid.NewString() }
	}
	if a.metrics == nil {
		a.metrics = metrics.Nop{}
	}
	board, err := breakerboard.New(breakerboard.Config{Now: a.Now})
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	a.Queries.Breakers = board
	a.hooks = hooks{m: a.metrics, board: board}
	auth, err := authenticator(cfg)
	if err == nil {
		err = a.wire(cfg, owner, opt)
	}
	if err != nil {
		_ = a.Close()
		return nil, err
	}
	if a.HTTP, err = a.httpAPI(cfg, auth); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// httpAPI builds the HTTP API with the admin API and the console mounted.
func (a *App) httpAPI(cfg config.Config, auth identity.Authenticator) (http.Handler, error) {
	c := &a.Commands
	cons, err := a.console(cfg, auth)
	if err != nil {
		return nil, err
	}
	admin, err := adminapi.New(adminapi.Config{Redrive: c.Redrive, Auth: auth, Stock: c.Stock, Console: cons})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Config{
		Orders: c.Orders, Auth: auth, Log: a.Log,
		RequestID: func(r *http.Request) string { return yc.RequestID(r.Context()) },
		OnRequest: a.hooks.httpRequest,
		Admin:     admin,
	})
}

// wire builds the use cases, each once, with its constructor.
func (a *App) wire(cfg config.Config, owner string, opt Options) error {
	if err := a.wireRelay(cfg, owner, opt); err != nil {
		return err
	}
	if err := a.wireSaga(cfg, owner, opt); err != nil {
		return err
	}
	oc := orders.Config{
		Store: a.store, Dispatcher: a.Commands.Relay, Shards: cfg.Relay.Shards,
		Now: a.Now, NewID: a.NewID, Log: a.Log, OnIdempotency: a.hooks.idempotency,
		Steps: orchestrator.CreateOrderSaga.Table(), Starter: sagaStarter{a.Commands.Advancer},
	}
	if opt.Orders != nil {
		opt.Orders(&oc)
	}
	var err error
	if a.Commands.Orders, err = orders.New(oc); err != nil {
		return err
	}
	return a.wireJobs(cfg)
}

// sagaStarter is the App's advancer as the orders use case's SagaStarter:
// a new order's saga runs its leading in-transaction steps in the order's
// transaction, through the advancer's own save path (orchestrator.Start).
type sagaStarter struct{ adv *orchestrator.Advancer }

func (s sagaStarter) NewStart() orders.SagaStart { return s.adv.NewStart() }

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
// msg, fields on one line). Empty string fields are left out, so a line
// never carries an empty correlation field (a replay has no saga id to log,
// a local request no request id).
func NewLogger(w io.Writer, level string) *slog.Logger {
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
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: dropEmpty}))
}

// dropEmpty leaves out attributes whose value is the empty string (a zero
// Attr is discarded by the handler); the built-in keys are kept.
func dropEmpty(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.MessageKey || a.Key == slog.LevelKey || a.Key == slog.TimeKey) {
		return a
	}
	if a.Value.Kind() == slog.KindString && a.Value.String() == "" {
		return slog.Attr{}
	}
	return a
}

// EnsureQueues creates the queues of triggers.yaml (local runs and tests;
// in the cloud Terraform creates them) through Commands.Queues, dead-letter
// queues first so that redrive policies can name them.
func (a *App) EnsureQueues(ctx context.Context, qs []triggers.Queue) error {
	specs := make([]queuesetup.Queue, len(qs))
	for i, q := range qs {
		specs[i] = queuesetup.Queue{Name: q.Name, VisibilityTimeout: time.Duration(q.VisibilityTimeoutSeconds) * time.Second,
			MaxReceiveCount: q.MaxReceiveCount, DeadLetterQueue: q.DeadLetterQueue}
	}
	_, err := a.Commands.Queues.Ensure(ctx, specs)
	return err
}
