package orchestrator_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/transport/identity"
)

// The participants implement the advancer's ports.
var (
	_ orchestrator.Inventory = (*stock.Service)(nil)
	_ orchestrator.Payments  = (*payments.Service)(nil)
	_ outboxwrite.Dispatcher = (*recorder)(nil)
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is the shared settable test clock.
type clock = fakeclock.Clock

// recorder is the fake Dispatcher: it keeps every dispatched row and, like
// the real fast path, marks it published (a row the test "delivers" has been
// sent).
type recorder struct {
	mu     sync.Mutex
	events []outbox.Event
	all    []outbox.Event
	store  store.Store
}

func (r *recorder) Dispatch(ctx context.Context, evs []outbox.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, evs...)
	r.all = append(r.all, evs...)
	if r.store == nil {
		return
	}
	_ = r.store.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx store.Tx) error {
		for _, e := range evs {
			prev := e.Version
			e.Version, e.Status, e.LeaseOwner, e.LeaseUntil = prev+1, outbox.StatusPublished, "", time.Time{}
			_ = tx.UpdateOutbox(ctx, e, prev) // a row the relay took over stays its
		}
		return nil
	})
}

func (r *recorder) take() []outbox.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func (r *recorder) count(eventType string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.all {
		if e.EventType == eventType {
			n++
		}
	}
	return n
}

// delivery is one message waiting in the fake queue.
type delivery struct {
	msg    orchestrator.Message
	due    time.Time
	copied bool // already duplicated once
}

// env is a whole saga world on a real SQLite file: the order service, the
// participants, the advancer, recovery, and a fake queue the test delivers.
type env struct {
	t       *testing.T
	store   *sqlitestore.Store
	clock   *clock
	sim     *paymentsim.Sim
	stock   *stock.Service
	pay     *payments.Service
	payVia  *switchProvider // the provider under pay; a test may switch it before the first order
	adv     *orchestrator.Advancer
	rec     *orchestrator.Recovery
	orders  *orders.Service
	disp    *recorder
	queue   []delivery
	rnd     *rand.Rand
	initial map[string]int64
	sagas   []string // saga ids in creation order
	orderOf map[string]string
	stats   map[orchestrator.Status]int
	steps   map[string]int // "step/dir/outcome" → count (metrics hook)
	relayed int            // saga commands the relay stand-in published
	// fault and afterStep, when set, fail a step instead of running it
	// and crash the process after a step's effect (orchestrator.Faults,
	// injected into the advancer's step table).
	fault, afterStep func(step string, dir saga.Direction) error
}

type envOpts struct {
	stock map[string]int64
	sim   paymentsim.Config
	seed  uint64
	// tick, when positive, advances the clock by that much on every
	// reading (fakeclock.NewTicking), as a real clock moves between reads.
	tick time.Duration
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "saga.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	clk := fakeclock.NewTicking(t0, o.tick)
	var n atomic.Int64
	newID := func() string { return fmt.Sprintf("id-%08d", n.Add(1)) }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, store: st, clock: clk, sim: must(paymentsim.New(o.sim))(t), disp: &recorder{store: st},
		rnd: rand.New(rand.NewPCG(o.seed, 99)), initial: o.stock, orderOf: map[string]string{},
		stats: map[orchestrator.Status]int{}, steps: map[string]int{}}
	e.stock = must(stock.New(stock.Config{Store: st, Now: clk.Now}))(t)
	if err := e.stock.Seed(ctx, o.stock); err != nil {
		t.Fatalf("seed: %v", err)
	}
	e.payVia = &switchProvider{e.sim}
	e.pay = must(payments.New(payments.Config{Store: st, Provider: e.payVia, Now: clk.Now}))(t)
	steps := orchestrator.InjectFaults(orchestrator.CreateOrderSaga, orchestrator.Faults{
		Fail: func(_ context.Context, at orchestrator.FaultPoint) error {
			step, dir := at.Step, at.Dir
			if e.fault == nil {
				return nil
			}
			return e.fault(step, dir)
		},
		CrashAfter: func(_ context.Context, at orchestrator.FaultPoint) error {
			step, dir := at.Step, at.Dir
			if e.afterStep == nil {
				return nil
			}
			return e.afterStep(step, dir)
		},
	})
	e.adv, err = orchestrator.NewAdvancer(orchestrator.AdvancerConfig{Store: st, Inventory: e.stock, Payments: e.pay, Dispatcher: e.disp, Steps: steps,
		Now: clk.Now, NewID: newID, Owner: "adv-test", Lease: 30 * time.Second, Log: log,
		Backoff: resilience.Backoff{Base: time.Second, Cap: 8 * time.Second, Rand: resilience.NewRand(o.seed)},
		Hooks: orchestrator.Hooks{
			OnMessage: func(s orchestrator.Status) { e.stats[s]++ },
			OnStep: func(step string, dir saga.Direction, out saga.Outcome) {
				e.steps[fmt.Sprintf("%s/%s/%s", step, dir, out)]++
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.rec, err = orchestrator.NewRecovery(orchestrator.RecoveryConfig{Store: st, Now: clk.Now, NewID: newID, StuckAfter: time.Minute,
		Dispatcher: e.disp, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	e.orders = must(orders.New(orders.Config{Store: st, Dispatcher: e.disp, Now: clk.Now, NewID: newID, Log: log}))(t)
	return e
}

// advWith rebuilds the advancer with change applied to its configuration
// (its step table keeps e.fault and e.afterStep).
func (e *env) advWith(change func(*orchestrator.AdvancerConfig)) {
	e.t.Helper()
	c := e.adv.Config()
	change(&c)
	adv, err := orchestrator.NewAdvancer(c)
	if err != nil {
		e.t.Fatal(err)
	}
	e.adv = adv
}

// recWith rebuilds the recovery with change applied to its configuration.
func (e *env) recWith(change func(*orchestrator.RecoveryConfig)) {
	e.t.Helper()
	c := e.rec.Config()
	change(&c)
	rec, err := orchestrator.NewRecovery(c)
	if err != nil {
		e.t.Fatal(err)
	}
	e.rec = rec
}

// switchProvider is the payment provider port with a provider a test can
// switch (the payments service is built once, over this).
type switchProvider struct{ payments.Provider }

// must returns a constructor's result, failing the test on its error.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// place creates an order through the order service and queues its first command.
func (e *env) place(items ...order.Item) (orderID, sagaID string) {
	e.t.Helper()
	key := fmt.Sprintf("key-%d", len(e.sagas)+1)
	resp, err := e.orders.Create(context.Background(), orders.CreateCommand{
		Caller: identity.Identity{Subject: "client-1"}, Key: key,
		Request: order.Request{CustomerID: "cust-1", Currency: "RUB", Items: items}})
	if err != nil {
		e.t.Fatalf("create order: %v", err)
	}
	o := e.order(resp.OrderID)
	e.sagas = append(e.sagas, o.SagaID)
	e.orderOf[o.SagaID] = o.ID
	e.pump()
	return o.ID, o.SagaID
}

// pump moves dispatched saga commands into the fake queue.
func (e *env) pump() {
	for _, ev := range e.disp.take() {
		if ev.Destination != outbox.DestSagaCommands {
			continue
		}
		e.queue = append(e.queue, delivery{due: ev.NextAttemptAt, msg: orchestrator.Message{
			EventID: ev.ID, Body: ev.Payload, Attributes: ev.Attributes(), ReceiveCount: 1}})
	}
}

// chaos configures a delivery run.
type chaos struct {
	shuffle   bool    // deliver in random order
	duplicate float64 // probability that a delivered message comes once more, later
	lose      float64 // probability that a message is acknowledged unprocessed (lost)
}

// deliver runs the fake queue until it is empty. A Handle error puts the
// message back (the queue redelivers after the visibility timeout) and moves
// the clock past the lease, as a crashed advancer's lease must lapse first.
func (e *env) deliver(c chaos) {
	e.t.Helper()
	for guard := 0; len(e.queue) > 0 || e.relay() > 0; guard++ {
		if guard > 100000 {
			e.t.Fatal("delivery does not converge")
		}
		i := 0
		if c.shuffle {
			i = e.rnd.IntN(len(e.queue))
		}
		d := e.queue[i]
		e.queue = append(e.queue[:i], e.queue[i+1:]...)
		if c.lose > 0 && e.rnd.Float64() < c.lose {
			continue
		}
		if !d.copied && c.duplicate > 0 && e.rnd.Float64() < c.duplicate {
			d.copied = true
			dup := d
			dup.msg.ReceiveCount++
			e.queue = append(e.queue, dup)
		}
		e.clock.AtLeast(d.due)
		e.clock.Advance(time.Millisecond)
		if _, err := e.adv.Handle(context.Background(), d.msg); err != nil {
			d.msg.ReceiveCount++
			e.queue = append(e.queue, d)
			e.clock.Advance(e.adv.Config().Lease + time.Second)
		}
		e.pump()
	}
}

// relay stands in for the outbox relay: it publishes the saga commands
// nobody dispatched whose lease lapsed — the rows a chaining advancer wrote
// for its next step and then died — into the fake queue. It returns how
// many it moved.
func (e *env) relay() int {
	e.t.Helper()
	var rows []outbox.Event
	err := e.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		rows = rows[:0]
		due, err := tx.ListOutboxDue(ctx, 0, e.clock.Now(), 1000)
		if err != nil {
			return err
		}
		for _, r := range due {
			if r.Destination != outbox.DestSagaCommands {
				continue
			}
			prev := r.Version
			r.Status, r.PublishedAt, r.LeaseOwner, r.LeaseUntil, r.Version = outbox.StatusPublished, e.clock.Now(), "", time.Time{}, prev+1
			if err := tx.UpdateOutbox(ctx, r, prev); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("relay: %v", err)
	}
	for _, r := range rows {
		e.relayed++
		e.queue = append(e.queue, delivery{due: r.NextAttemptAt, msg: orchestrator.Message{
			EventID: r.ID, Body: r.Payload, Attributes: r.Attributes(), ReceiveCount: 1}})
	}
	return len(rows)
}

// settle delivers, then runs recovery until every saga finished.
func (e *env) settle(c chaos) {
	e.t.Helper()
	for round := 0; ; round++ {
		e.deliver(c)
		if e.unfinished() == 0 {
			return
		}
		if round > 50 {
			e.t.Fatalf("%d sagas never finish", e.unfinished())
		}
		e.clock.Advance(e.adv.Config().Lease + e.rec.Config().StuckAfter + time.Second)
		if _, err := e.rec.Run(context.Background()); err != nil {
			e.t.Fatalf("recovery: %v", err)
		}
		e.pump()
	}
}

func (e *env) unfinished() int {
	n := 0
	e.view(func(ctx context.Context, tx store.Tx) error {
		for _, st := range []saga.State{saga.StatePending, saga.StateRunning, saga.StateCompensating} {
			list, err := tx.ListSagasByState(ctx, st, time.Time{}, len(e.sagas)+1)
			if err != nil {
				return err
			}
			n += len(list)
		}
		return nil
	})
	return n
}

func (e *env) view(fn func(ctx context.Context, tx store.Tx) error) {
	e.t.Helper()
	if err := e.store.View(context.Background(), fn); err != nil {
		e.t.Fatalf("view: %v", err)
	}
}

func (e *env) saga(id string) (s saga.Instance) {
	e.t.Helper()
	e.view(func(ctx context.Context, tx store.Tx) (err error) { s, err = tx.GetSaga(ctx, id); return err })
	return s
}

func (e *env) order(id string) (o order.Order) {
	e.t.Helper()
	e.view(func(ctx context.Context, tx store.Tx) (err error) { o, err = tx.GetOrder(ctx, id); return err })
	return o
}

// trail is the saga's step log as "step/direction/outcome" lines.
func (e *env) trail(id string) []string {
	e.t.Helper()
	var log []saga.LogEntry
	e.view(func(ctx context.Context, tx store.Tx) (err error) { log, err = tx.ListSagaLog(ctx, id); return err })
	out := make([]string, len(log))
	for i, l := range log {
		out[i] = fmt.Sprintf("%s/%s/%s", l.Step, l.Direction, l.Outcome)
		if l.Seq != i+1 {
			e.t.Errorf("saga %s log seq %d at position %d", id, l.Seq, i)
		}
	}
	return out
}

func (e *env) stockOf(sku string) inventory.Stock {
	e.t.Helper()
	s, err := e.stock.Get(context.Background(), sku)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) totals() (charged, refunded int64) {
	e.t.Helper()
	c, r, err := e.pay.Totals(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return c, r
}
