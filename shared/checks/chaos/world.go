package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/triggers"
)

// errCrash is what an injected crash returns: the process "died" here.
var errCrash = errors.New("chaos: process crashed")

// world is one chaos run: the App on fake time with fault-injecting
// decorators around its ports, the workload, and what was observed.
type world struct {
	opts   Options
	faults Faults
	in     *injector
	qin    *injector // the queue's stream (the relay's sends draw from it)
	clock  *clock
	// outages are the long outages of an Outages run (nil otherwise).
	outages *outages
	app     *app.App
	sqlite  *sqlitestore.Store // the undecorated store: the checker reads through it
	sim     *paymentsim.Sim
	fx      *effects

	crashes, faultsN, retries, msgs, invFail *tally
	inTx                                     *tally // in_tx_sends (InTx)

	cmdURL, dlqURL, eventsURL string
	batch                     int
	visibility                time.Duration

	requests atomic.Int64 // POST /orders sent
	// invocations numbers the function invocations (invoked).
	invocations atomic.Uint64

	// Instances (multi-instance modes): cfg is the deployed configuration,
	// roles the App instances playing each component ("api", "advancer",
	// "relay", "recovery"; every role is w.app in the classic run), rr the
	// round-robin counter of pick.
	cfg      config.Config
	roles    map[string][]*app.App
	rr       atomic.Uint64
	settings []string
	deploys  int
	fstore   store.Store
	fqueue   queue.Queue
	newID    func() string
	logger   *slog.Logger
	// mu guards delivered, poison, history and keys in concurrent runs.
	mu sync.Mutex
	// stall is set when the drain stopped making progress; deadGrowth then
	// holds, per unfinished saga, its dead letters before and after the
	// extra recovery rounds.
	stall      string
	lastLeft   [2]int // unfinished sagas, pending outbox rows at the last leftover
	deadGrowth map[string][2]int
	refused    atomic.Int64

	initial map[string]int64
	wl      *rand.Rand // the workload's own stream, independent of the faults
	keys    []*keyRun
	// delivered counts deliveries to the advancer per outbox event id.
	delivered map[string]int
	history   [][]byte // recent advancer envelopes, for stale redelivery
	// poison marks commands that crash the advancer (decided on first sight).
	poison map[string]bool
	origin *origins
	// sampled holds violations seen while sampling stock during the run.
	sampled []string
	// operations counts the operator's rounds on sharded stock.
	operations  int64
	lastRelay   time.Time
	lastRecover time.Time
	drainRounds int
}

func newWorld(ctx context.Context, opts Options) (*world, func(), error) {
	w := &world{opts: opts, clock: newClock(opts.Advancing), keys: make([]*keyRun, opts.Orders),
		delivered: map[string]int{}, poison: map[string]bool{}, origin: &origins{m: map[string]string{}},
		crashes: newTally(), faultsN: newTally(), retries: newTally(), msgs: newTally(), invFail: newTally(), inTx: newTally(),
		in: newInjector(opts.Seed),
		wl: rand.New(&lockedSource{src: rand.NewPCG(opts.Seed, 0x0dde5)})}
	w.faults = DefaultFaults()
	if opts.Faults != nil {
		w.faults = *opts.Faults
	}
	if opts.Outages {
		w.outages = planOutages(opts.Orders, opts.Seed)
	}
	dir, cleanup := opts.Dir, func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "ordersaga-chaos-")
		if err != nil {
			return nil, nil, fmt.Errorf("chaos: temp dir: %w", err)
		}
		dir, cleanup = d, func() { _ = os.RemoveAll(d) }
	}
	if err := w.build(ctx, filepath.Join(dir, fmt.Sprintf("chaos-%d.db", opts.Seed))); err != nil {
		w.close()
		cleanup()
		return nil, nil, err
	}
	return w, func() { w.close(); cleanup() }, nil
}

func (w *world) close() {
	if w.app != nil {
		_ = w.app.Close()
	}
	if w.sqlite != nil {
		_ = w.sqlite.Close()
	}
}

// counter returns a generator of ids with a prefix and a zero-padded count
// (so ids sort in creation order).
func counter(prefix string) func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("%s%010d", prefix, n.Add(1)) }
}

// build opens the store and the queue on one file, wraps them in the
// fault-injecting decorators, builds the App and rewires its fault points.
func (w *world) build(ctx context.Context, path string) error {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(f) // a previous run's file in Options.Dir
	}
	cfg := config.Default()
	cfg.SQLitePath, cfg.QueueSQLite, cfg.Metrics = path, path, "none"
	if !w.opts.Concurrent {
		// A sequential run replays exactly from its seed: one message
		// after another, one relay send after another. Concurrent runs
		// keep SAGA_BATCH_CONCURRENCY's and RELAY_SEND_CONCURRENCY's
		// defaults, so a batch's sagas and a round's sends also race.
		cfg.Saga.BatchConcurrency = 1
		cfg.Relay.SendConcurrency = 1
	}
	if w.opts.Vary {
		w.vary(&cfg)
	}
	w.cfg = cfg
	logOut := io.Discard
	if w.opts.Verbose {
		logOut = w.opts.Log
	}
	w.logger = slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	if w.sqlite, err = sqlitestore.Open(ctx, path, sqlitestore.Config{Now: w.clock.Now}); err != nil {
		return fmt.Errorf("chaos: open store: %w", err)
	}
	// The queue shares the store's writer connection, as app.New wires it
	// for one file.
	q, err := sqlitequeue.New(w.sqlite.DB(), sqlitequeue.Config{Now: w.clock.Now, NewID: counter("m")})
	if err != nil {
		return fmt.Errorf("chaos: open queue: %w", err)
	}
	var inner store.Store = w.sqlite
	if w.opts.rerunTx {
		inner = rerunStore{w.sqlite}
	}
	w.fstore = &faultyStore{inner: inner, in: w.in, f: &w.faults, faults: w.faultsN}
	// The queue draws from a stream of its own: the relay's sends overlap
	// its store transactions (see injector).
	w.qin = w.in.stream(w.opts.Seed, queueStream)
	fq := &faultyQueue{inner: q, in: w.qin, f: &w.faults, faults: w.faultsN, refuse: w.eventsRefuse}
	w.fqueue = fq
	if w.opts.InTx {
		// The queue already shares the store's *sql.DB (as localwiring
		// wires one file), so SendInTx can write in the store's
		// transactions once the decorator forwards it.
		if err := recordSent(ctx, w.sqlite.DB()); err != nil {
			return err
		}
		w.fqueue = &txFaultyQueue{faultyQueue: fq, sent: w.inTx}
	}
	w.newID = counter("id")
	if err := w.newProvider(); err != nil {
		return err
	}
	w.app, err = app.New(ctx, cfg, app.Use(app.Ports{Store: w.fstore, Queue: w.fqueue}),
		w.instanceOptions(cfg, app.Options{Now: w.clock.Now, NewID: w.newID, Log: w.logger, Owner: "chaos"}, 0))
	if err != nil {
		return fmt.Errorf("chaos: build app: %w", err)
	}
	if err := w.setupQueues(ctx); err != nil {
		return err
	}
	w.roles = map[string][]*app.App{"api": {w.app}, "advancer": {w.app}, "relay": {w.app}, "recovery": {w.app}}
	if w.opts.multi() {
		if err := w.deploy(ctx, cfg); err != nil {
			return err
		}
	}
	w.initial = map[string]int64{
		"sku-a": int64(6 * w.opts.Orders), "sku-b": int64(w.opts.Orders/2 + 5),
		"sku-c": int64(w.opts.Orders/8 + 5), "sku-out": 0,
	}
	if err := w.app.Commands.Stock.Seed(ctx, w.initial); err != nil {
		return fmt.Errorf("chaos: seed stock: %w", err)
	}
	if w.opts.Sharded {
		if err := w.shardStock(ctx); err != nil {
			return err
		}
	}
	if w.opts.Tamper != nil {
		w.opts.Tamper(w.app)
		for _, a := range w.instances() {
			if a != w.app {
				w.opts.Tamper(a)
			}
		}
	}
	return nil
}

// setupQueues creates the queues of triggers.yaml and reads the advancer
// trigger's batch size and visibility timeout.
func (w *world) setupQueues(ctx context.Context) error {
	path := w.opts.TriggersPath
	if path == "" {
		p, err := findUp(filepath.Join("triggers", "triggers.yaml"))
		if err != nil {
			return err
		}
		path = p
	}
	tf, err := triggers.Load(path)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	if err := w.app.EnsureQueues(ctx, tf.Queues); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	urls := w.app.Config.QueueURLs
	w.cmdURL, w.dlqURL, w.eventsURL = urls.SagaCommands, urls.SagaCommandsDLQ, urls.OrderEvents
	w.batch, w.visibility = 10, 2*time.Minute
	for _, t := range tf.QueueTriggers {
		if t.Function == "sagaadvancer" {
			w.batch, w.visibility = t.BatchSize, time.Duration(t.VisibilityTimeoutSeconds)*time.Second
		}
	}
	return nil
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("chaos: %s not found above the working directory (set Options.TriggersPath)", rel)
		}
		dir = parent
	}
}

// instanceOptions adds to opt what the run puts into the use cases as they
// are built: the relay's crash after a send (a decorator on its queue) and
// the order API's dropped fast path, the relay's seeded backoff jitter and counters, and the
// run's payment provider; n numbers the instance (its jitter streams).
func (w *world) instanceOptions(cfg config.Config, opt app.Options, n uint64) app.Options {
	f := &w.faults
	opt.Orders = func(c *orders.Config) { c.Dispatcher = w.dropper("api", f.APIDropDispatch, c.Dispatcher) }
	opt.Relay = func(c *relay.Config) {
		// Drawn from the queue's stream: the relay sends on a goroutine of
		// its own while it records and claims through the store (injector).
		c.Queue = crashAfterSend(c.Queue, func() bool { return w.qin.fire(w.crashes, "relay_after_send", f.RelayCrashAfterSend) })
		c.Backoff.Rand = resilience.NewRand(w.opts.Seed + 1 + 16*n)
		onFailed := c.Hooks.OnFailed
		c.Hooks.OnFailed = func(dest string, k int) {
			w.retries.add("outbox_send_failed", k)
			if onFailed != nil {
				onFailed(dest, k)
			}
		}
	}
	opt.Payments = func(c *payments.Config) { c.Provider = w.provider(cfg.Payment, opt.Now, n) }
	w.wireFaults(&opt, n)
	return opt
}

// dropper wraps a fast-path dispatcher in the crash before dispatch; in
// an InTx run it also forwards PublishInTx (txDropper).
func (w *world) dropper(who string, p float64, inner outboxwrite.Dispatcher) outboxwrite.Dispatcher {
	d := &dropper{inner: inner, in: w.in, p: p, kind: who + "_before_dispatch", who: who,
		crashes: w.crashes, origin: w.origin}
	if w.opts.InTx {
		return &txDropper{dropper: d}
	}
	return d
}

// wireFaults sets opt to build the advancer and the recovery with the
// run's faults: crashes and faults injected into the advancer's step table
// (orchestrator.InjectFaults), the dispatchers of both wrapped in the crash
// before dispatch, the advancer's backoff jitter seeded and counters
// chained onto its metric hooks.
func (w *world) wireFaults(opt *app.Options, n uint64) {
	opt.Recovery = func(rec *orchestrator.RecoveryConfig) {
		rec.Dispatcher = w.dropper("recovery", w.faults.RecoveryDropDispatch, rec.Dispatcher)
	}
	opt.Advancer = func(adv *orchestrator.AdvancerConfig) {
		w.faultAdvancer(adv, n)
		if w.opts.TamperAdvancer != nil {
			w.opts.TamperAdvancer(adv)
		}
	}
}

// faultAdvancer is wireFaults for the advancer's configuration.
func (w *world) faultAdvancer(adv *orchestrator.AdvancerConfig, n uint64) {
	f := &w.faults
	adv.Dispatcher = w.dropper("advancer", f.AdvancerDropDispatch, adv.Dispatcher)
	adv.Backoff.Rand = resilience.NewRand(w.opts.Seed + 2 + 16*n)
	h := adv.Hooks
	onMsg, onStep := h.OnMessage, h.OnStep
	h.OnMessage = func(s orchestrator.Status) {
		w.msgs.add(string(s), 1)
		if onMsg != nil {
			onMsg(s)
		}
	}
	h.OnStep = func(step string, dir saga.Direction, out saga.Outcome) {
		if out == saga.OutcomeRetry {
			w.retries.add("saga_step_retry", 1)
		}
		if onStep != nil {
			onStep(step, dir, out)
		}
	}
	adv.Hooks = h
	// A step's faults are keyed by the step run (stepKey): an action inside
	// a save transaction is asked again when the store runs the
	// transaction again, and must get the same answer.
	//
	// Only an advancer invocation's steps get step faults: the steps a new
	// order's transaction runs (orchestrator.Start) belong to an API
	// request, whose crashes and failures are the store decorator's and
	// the API's own (a crash there rolls the whole order back).
	adv.Steps = orchestrator.InjectFaults(adv.Steps, orchestrator.Faults{
		CrashAfter: func(ctx context.Context, at orchestrator.FaultPoint) error {
			if !invoking(ctx) {
				return nil
			}
			kind, p := "step_after_effect", f.CrashAfterStep
			switch {
			case at.InTx:
				kind, p = "advancer_in_save", f.CrashInSave
			case at.Dir == saga.Compensate:
				kind, p = "compensation_after_effect", f.CrashAfterComp
			}
			if w.in.keyed(w.crashes, kind, p, stepKey(ctx, at)) {
				return errCrash
			}
			return nil
		},
		Fail: func(ctx context.Context, at orchestrator.FaultPoint) error {
			if !invoking(ctx) {
				return nil
			}
			key := stepKey(ctx, at)
			switch {
			case at.Dir == saga.Compensate && w.in.keyed(w.faultsN, "compensation_gave_up", f.CompensationDies, key):
				return apperr.New(apperr.Invalid, "chaos: compensation %s refused for good", at.Step)
			case at.Dir == saga.Forward && at.Step == saga.StepConfirmOrder && w.in.keyed(w.faultsN, "confirm_rejected", f.ConfirmRejected, key):
				return apperr.New(apperr.Rejected, "chaos: confirmation refused")
			case w.in.keyed(w.faultsN, "step_transient", f.StepTransient, key):
				return stepUnavailable(at.Step)
			}
			return nil
		},
	})
}

// stepKey names one run of a step for keyed faults: the invocation that
// runs it and the saga's token (step, direction, attempt, epoch), the saga
// named by its correlation id — the order's idempotency key, drawn from the
// workload stream — not by its id: ids come from one counter that
// concurrent duplicate requests race for, so they are not fixed by the
// seed. Every run of one save transaction shares the key; a later delivery
// of the same command (after a crash rolled the step back) is another
// invocation.
func stepKey(ctx context.Context, at orchestrator.FaultPoint) string {
	name := at.Saga.CorrelationID
	if name == "" {
		name = "id:" + at.Saga.ID
	}
	return fmt.Sprintf("%s/%s/%d/%s/%d/%d", invocation(ctx), name, at.Saga.Step, at.Dir, at.Saga.Attempts, at.Saga.Data.Epoch)
}

// crashQueue is the relay's queue with a crash after the queue accepted a
// batch and before the relay marks its rows published: when fire says so,
// SendBatch returns the queue's results with an error wrapping
// relay.ErrCrash, and the relay records nothing. It crashes the relay's
// own rounds only, not a fast-path dispatch (fastPathKey): those have
// their crash before dispatch (dropper). fire is asked once per batch the
// queue accepted a message of.
type crashQueue struct {
	queue.Queue
	fire func() bool
}

// txCrashQueue is a crashQueue that forwards relay.TxSender to its queue.
type txCrashQueue struct {
	crashQueue
	ts relay.TxSender
}

var _ relay.TxSender = txCrashQueue{}

// crashAfterSend decorates q with the crash fire decides (crashQueue),
// keeping q's relay.TxSender.
func crashAfterSend(q queue.Queue, fire func() bool) queue.Queue {
	c := crashQueue{Queue: q, fire: fire}
	if ts, ok := q.(relay.TxSender); ok {
		return txCrashQueue{crashQueue: c, ts: ts}
	}
	return c
}

// SendBatch implements queue.Queue.
func (q crashQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	res, err := q.Queue.SendBatch(ctx, url, msgs)
	if err != nil || ctx.Value(fastPathKey{}) != nil {
		return res, err
	}
	for _, r := range res {
		if r.Err == nil {
			if q.fire() {
				return res, fmt.Errorf("%w: %w", relay.ErrCrash, errCrash)
			}
			break
		}
	}
	return res, nil
}

// SendInTx implements relay.TxSender.
func (q txCrashQueue) SendInTx(ctx context.Context, tx store.Tx, url string, msgs []queue.OutMessage) ([]queue.SendResult, bool, error) {
	return q.ts.SendInTx(ctx, tx, url, msgs)
}

// Committed implements relay.TxSender.
func (q txCrashQueue) Committed(urls ...string) { q.ts.Committed(urls...) }

// outKey names an outgoing message for faults decided once: the outbox event it
// carries, or its batch entry id.
func outKey(m queue.OutMessage) string {
	if id := m.Attributes[outbox.AttrEventID]; id != "" {
		return id
	}
	return m.ID
}

// must returns v, or panics on err (a component the run built from a
// configuration that an App already accepted).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// queueStream salts the queue decorator's stream of fault decisions.
const queueStream = 0x51a7e
