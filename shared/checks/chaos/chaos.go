// Package chaos runs the whole of ordersaga in one process on the local
// adapters (SQLite store, embedded queue sharing its file, the simulated
// payment provider) for N orders while injecting faults at random: process
// crashes at every step boundary, duplicated, reordered and stale
// deliveries, advancer invocations that fail (the batch returns after the
// visibility timeout and, after max_receive_count, moves to the DLQ),
// transient store and queue errors, payment provider failures, lost answers
// and slowness, and duplicate client requests. Then it stops injecting, lets
// the relay and recovery drain, and checks every delivery guarantee of
// docs/architecture.md against the database, the queues and the provider.
//
// A run is reproducible: every random choice comes from the seed (the
// workload, the faults, the provider, the backoff jitter), ids come from
// counters, and time is a fake clock the run advances (leases, backoffs and
// visibility timeouts expire without sleeping). Duplicate client requests
// run concurrently; their outcome does not depend on which one wins. A
// fault decided inside a store transaction, which the store may run again,
// is the same on every run of it and counted once (injector), so the run
// does not depend on how often its transactions ran.
package chaos

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/wiring/app"
)

// Options configure Run. The zero value runs 100 orders with seed 0.
type Options struct {
	// Orders is the number of distinct orders (idempotency keys); default 100.
	Orders int
	// Seed makes the run reproducible.
	Seed uint64
	// Verbose sends the product's logs (JSON) to Log as well as progress.
	Verbose bool
	// Log receives progress lines (and, with Verbose, the product's logs);
	// nil discards them.
	Log io.Writer
	// Dir holds the database file (chaos-<seed>.db, replaced at the start
	// and kept afterwards for inspection); "" uses a temporary directory
	// that is removed afterwards.
	Dir string
	// Faults are the injection rates; nil means DefaultFaults().
	Faults *Faults
	// TriggersPath is triggers/triggers.yaml (the queues and the advancer's
	// trigger); "" looks for it upwards from the working directory.
	TriggersPath string
	// Tamper, if set, is called once the App is wired, before the first
	// order. Tests use it to break the product on purpose and prove that the
	// checker notices.
	Tamper func(a *app.App)
	// TamperAdvancer, if set, adjusts every advancer's configuration as it
	// is built (after the run's faults), for tests that break the saga
	// engine on purpose.
	TamperAdvancer func(*orchestrator.AdvancerConfig)
	// AfterDrain, if set, is called after the drain and before the checks
	// (tests use it to damage the final state).
	AfterDrain func(ctx context.Context, a *app.App, st store.Store) error

	// The modes below find ordering, settlement and liveness bugs. Each is off in the
	// zero value (the sequential, deterministic run above); any of them turns
	// on Strict.

	// Concurrent runs the API clients, the advancers, the relays and the
	// recovery in goroutines at once on the one SQLite file, each component
	// instance its own App (own lease owner, breaker and clock) over the
	// shared store and queue; a driver moves the fake clock forward in real
	// time. Such a run is not reproducible: goroutines interleave as they
	// will (the seed still fixes the workload's stream and the settings).
	Concurrent bool
	// Clients, Advancers and Relays size a concurrent run (defaults 8, 3, 2).
	Clients, Advancers, Relays int
	// Skew gives every component instance its own clock, offset from the
	// run's clock by a seed-drawn amount in [-Skew, +Skew] (constant per
	// instance, so each clock stays monotonic). A sequential run with Skew
	// plays two instances of each component, alternating.
	Skew time.Duration
	// Unicode puts random Unicode into every text field of the requests
	// (Idempotency-Key, customer_id, currency, sku): noncharacters U+FFFE,
	// U+FFFF and U+FDD0, invalid UTF-8 (a lone surrogate's bytes, 0xFF),
	// right-to-left text and overrides, emoji with joiners, combining marks.
	// The API must refuse such a request with 400 and change nothing, or
	// accept it and then store it as it read it and publish all its events.
	Unicode bool
	// Vary draws the settings from the seed instead of the defaults: the
	// outbox shard count (changed, mostly lowered, by a redeploy half-way),
	// short saga and relay leases, short recovery windows, and breaker open
	// periods longer than the payment step's retry budget. Report.Settings
	// says what was drawn.
	Vary bool
	// Strict adds the strict checks to the classic ones: per-aggregate
	// event order on order-events, stock settlement ("reserved" is what
	// orders in flight hold), every saga ends within a bounded drain, no
	// order waits while its dead letters grow, every accepted order's events
	// were published, and no order was cancelled by a provider outage.
	Strict bool
	// InTx lets the local fast path inside the transaction run: the
	// fault-injecting decorators forward the ports that enable it
	// (outboxwrite.TxPublisher on the dispatchers, relay.TxSender on the queue), so a
	// new order, a saga step and a recovery resend store their messages
	// in their own transaction and write no outbox row for them; SendInTx
	// is refused or fails like the database at the rates of Faults. The
	// checker takes the queue's record of committed messages as those
	// events' outbox entries (docs/chaos-intx.md). Turns on Strict.
	InTx bool
	// Advancing moves the fake clock forward by this much after every
	// reading, as a real clock moves between two readings of one code path
	// (0: the clock moves only when the run moves it). Turns on Strict.
	Advancing time.Duration
	// Outages adds two long outages to a sequential run, each while several
	// orders are placed and the world runs on in one-second ticks: the
	// payment provider down for 3–8 minutes of fake time (within the
	// breaker's documented bound) and order-events down for 1–3 minutes,
	// after which the run redrives the outbox dead letters as an operator
	// would. Turns on Strict.
	Outages bool
	// Sharded spreads sku-a over 16 sub-rows and sku-b over 4 before the
	// first order, and has an operator rebalance them and change their
	// number of sub-rows (sku-b back to unsharded now and then) while the
	// orders run; the checker then also proves that every stock row and
	// sub-row holds exactly what the live reservations took from it.
	// Turns on Strict.
	Sharded bool

	// rerunTx makes the store under the run's decorators run every
	// transaction whose closure succeeds twice, rolling the first run back,
	// as SQLite does after a busy database or a failed group commit (tests
	// prove a run does not depend on how often its transactions ran).
	rerunTx bool
}

// multi reports whether the run plays several instances per component.
func (o Options) multi() bool { return o.Concurrent || o.Skew > 0 || o.Vary }

// mode names the run's modes.
func (o Options) mode() string {
	var m []string
	if o.Concurrent {
		m = append(m, fmt.Sprintf("concurrent(%d clients, %d advancers, %d relays)", o.Clients, o.Advancers, o.Relays))
	} else {
		m = append(m, "sequential")
	}
	if o.Skew > 0 {
		m = append(m, "skew ±"+o.Skew.String())
	}
	if o.Unicode {
		m = append(m, "unicode")
	}
	if o.Vary {
		m = append(m, "vary")
	}
	if o.InTx {
		m = append(m, "intx")
	}
	if o.Advancing > 0 {
		m = append(m, "advancing "+o.Advancing.String())
	}
	if o.Outages {
		m = append(m, "outages")
	}
	if o.Sharded {
		m = append(m, "sharded")
	}
	if o.strict() {
		m = append(m, "strict")
	}
	return strings.Join(m, "+")
}

// strict reports whether the strict checks run.
func (o Options) strict() bool {
	return o.Strict || o.multi() || o.Unicode || o.InTx || o.Advancing > 0 || o.Outages || o.Sharded
}

// Report is the outcome of a run. Apart from Elapsed, two runs with the
// same options and seed produce equal reports.
type Report struct {
	Seed   uint64 `json:"seed"`
	Orders int    `json:"orders"`
	// Requests counts every POST /orders sent, client retries included.
	Requests int `json:"requests"`
	// Confirmed, Cancelled and Failed count orders by final status.
	Confirmed int `json:"confirmed"`
	Cancelled int `json:"cancelled"`
	Failed    int `json:"failed"`
	// DuplicatesDelivered counts deliveries to the advancer of a message
	// (outbox event) it had been delivered before.
	DuplicatesDelivered int `json:"duplicates_delivered"`
	// Retries is the sum of RetriesBy: transient failures observed and
	// retried (saga step retries, payment call retries, outbox sends that
	// failed, client retries after 503/409, queue redeliveries, recovery
	// resends).
	Retries   int            `json:"retries"`
	RetriesBy map[string]int `json:"retries_by"`
	// Crashes are the injected process crashes, by kind (step boundary).
	Crashes map[string]int `json:"crashes"`
	// Faults are the injected transient errors and forced step outcomes, by kind.
	Faults map[string]int `json:"faults"`
	// InvocationFailures are failed function invocations, by function.
	InvocationFailures map[string]int `json:"invocation_failures"`
	// Messages are the advancer's results by status (processed, stale, ...).
	Messages map[string]int `json:"messages"`
	// DeadLetters is the number of dead-letter records; DeadLettersBy splits
	// them by source (queue: ingested from saga-commands-dlq; outbox: rows
	// that exhausted their publish attempts; saga: compensations that gave up).
	DeadLetters   int            `json:"dead_letters"`
	DeadLettersBy map[string]int `json:"dead_letters_by"`
	// DLQMoves is the number of messages the queue moved to
	// saga-commands-dlq after max_receive_count deliveries.
	DLQMoves int `json:"dlq_moves"`
	// DrainRounds is how many drain rounds the relay and recovery needed.
	DrainRounds int `json:"drain_rounds"`
	// FoldedSteps is the number of steps saved in the save transaction of
	// the step before them, as production saves a chained store-only
	// step: step-log lines whose command id names no outbox row and no
	// message sent in a transaction (in-tx runs commit those without rows).
	FoldedSteps int `json:"folded_steps"`
	// Simulated is the fake time the run covered.
	Simulated time.Duration `json:"simulated"`
	// Elapsed is the wall time of the run.
	Elapsed time.Duration `json:"elapsed"`
	// Mode names the modes the run used ("sequential" alone for the
	// classic run); Settings lists the settings that differ from the
	// defaults (Vary) and the instances' clock offsets (Skew).
	Mode     string   `json:"mode"`
	Settings []string `json:"settings,omitempty"`
	// Refused counts Unicode requests the API refused with 400 (Unicode).
	Refused int `json:"refused"`
	// InTxSends counts the messages the queue stored through SendInTx
	// (InTx; their transaction may have rolled back afterwards), and
	// InTxEvents the events whose message committed in their transaction
	// with no outbox row beside it.
	InTxSends  int `json:"in_tx_sends,omitempty"`
	InTxEvents int `json:"in_tx_events,omitempty"`
	// OutageRedriven counts the outbox dead letters redriven after the
	// order-events outage (Outages).
	OutageRedriven int `json:"outage_redriven,omitempty"`
	// Violations lists every broken guarantee (empty when all hold), at
	// most maxViolations of them; ViolationsBy counts all of them by check.
	Violations   []string       `json:"violations"`
	ViolationsBy map[string]int `json:"violations_by"`
}

// OK reports whether every guarantee held.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Run runs the chaos suite. A non-nil error means the run itself could not
// be carried out (setup failed, the context ended); broken guarantees are
// reported in Report.Violations with a nil error.
func Run(ctx context.Context, opts Options) (Report, error) {
	began := time.Now()
	if opts.Orders <= 0 {
		opts.Orders = 100
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Clients <= 0 {
		opts.Clients = 8
	}
	if opts.Advancers <= 0 {
		opts.Advancers = 3
	}
	if opts.Relays <= 0 {
		opts.Relays = 2
	}
	if opts.Outages && (opts.Concurrent || opts.Orders < minOutageOrders) {
		return Report{}, fmt.Errorf("chaos: Outages needs a sequential run of at least %d orders", minOutageOrders)
	}
	if opts.Advancing < 0 {
		return Report{}, fmt.Errorf("chaos: Advancing must not be negative (got %s)", opts.Advancing)
	}
	w, cleanup, err := newWorld(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer cleanup()
	if err := w.inject(ctx); err != nil {
		return Report{}, err
	}
	if err := w.drain(ctx); err != nil {
		return Report{}, err
	}
	if opts.AfterDrain != nil {
		if err := opts.AfterDrain(ctx, w.app, w.fstore); err != nil {
			return Report{}, fmt.Errorf("chaos: after-drain hook: %w", err)
		}
	}
	rep, err := w.check(ctx)
	if err != nil {
		return Report{}, err
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}
