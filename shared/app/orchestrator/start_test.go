package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/transport/identity"
)

// envStarter is the env's advancer (whatever it is at the time) as the
// order service's SagaStarter.
type envStarter struct{ e *env }

func (s envStarter) NewStart() orders.SagaStart { return s.e.adv.NewStart() }

var _ orders.SagaStart = (*orchestrator.Start)(nil)

// startEnv is newEnv whose order service runs the saga's leading steps in
// the order's transaction, over st (nil: the env's store).
func startEnv(t *testing.T, o envOpts, wrap func(store.Store) store.Store) *env {
	t.Helper()
	e := newEnv(t, o)
	var st store.Store = e.store
	if wrap != nil {
		st = wrap(st)
	}
	e.orders = must(orders.New(orders.Config{Store: st, Dispatcher: e.disp, Now: e.clock.Now, NewID: e.adv.Config().NewID,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Starter: envStarter{e}}))(t)
	return e
}

// sagaCommands are the saga.advance rows in the store, by any saga.
func (e *env) sagaCommands() []saga.Command {
	e.t.Helper()
	var out []saga.Command
	for _, r := range e.outboxRows(outbox.TypeSagaAdvance) {
		c, err := saga.DecodeCommand(r.Payload)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestStartReservesInTheOrdersTransaction: when POST /orders returns, the
// order's stock is reserved and its saga waits at process_payment, with
// the step log, the step hooks and the order of a delivered first command;
// the only command row written is process_payment's. The saga then ends as
// it does when the advancer runs every step.
func TestStartReservesInTheOrdersTransaction(t *testing.T) {
	old := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	oldOrder, oldSaga := old.place(item("sku-1", 2, 100))
	old.deliver(chaos{})

	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, nil)
	orderID, sagaID := e.place(item("sku-1", 2, 100))
	s := e.saga(sagaID)
	if s.State != saga.StateRunning || s.Step != 2 || s.LeaseOwner != "" || s.Attempts != 0 {
		t.Errorf("saga after POST: %s step %d attempts %d lease %q, want running at step 2 (process_payment), no lease",
			s.State, s.Step, s.Attempts, s.LeaseOwner)
	}
	if st := e.stockOf("sku-1"); st.Available != 8 || st.Reserved != 2 {
		t.Errorf("stock after POST: available %d reserved %d, want 8 and 2", st.Available, st.Reserved)
	}
	if o := e.order(orderID); o.Status != order.StatusPending {
		t.Errorf("order after POST: %s, want PENDING", o.Status)
	}
	want := []string{"create_order/forward/succeeded", "reserve_inventory/forward/succeeded"}
	if got := e.trail(sagaID); !reflect.DeepEqual(got, want) {
		t.Errorf("step log after POST: %v, want %v", got, want)
	}
	if got := e.steps; len(got) != 2 || got["create_order/forward/succeeded"] != 1 || got["reserve_inventory/forward/succeeded"] != 1 {
		t.Errorf("step hooks after POST: %v", got)
	}
	if len(e.stats) != 0 {
		t.Errorf("messages handled during POST: %v", e.stats)
	}
	cmds := e.sagaCommands()
	if len(cmds) != 1 || cmds[0].Step != 2 || cmds[0].State != saga.StateRunning {
		t.Fatalf("command rows after POST: %+v, want process_payment's alone", cmds)
	}
	if len(e.queue) != 1 {
		t.Fatalf("%d saga messages dispatched, want 1", len(e.queue))
	}
	// The first step's log line names the first command, never written.
	var first string
	e.view(func(ctx context.Context, tx store.Tx) error {
		log, err := tx.ListSagaLog(ctx, sagaID)
		if err != nil {
			return err
		}
		first = log[0].MessageID
		_, err = tx.GetOutbox(ctx, first)
		if !apperr.Is(err, apperr.NotFound) {
			t.Errorf("the first command %q was written (%v)", first, err)
		}
		return nil
	})
	if first == "" {
		t.Error("the first step's log line names no command")
	}

	e.deliver(chaos{})
	if o := e.order(orderID); o.Status != order.StatusConfirmed || old.order(oldOrder).Status != order.StatusConfirmed {
		t.Fatalf("order %s (advancer alone: %s), want CONFIRMED", o.Status, old.order(oldOrder).Status)
	}
	if got, want := e.trail(sagaID), old.trail(oldSaga); !reflect.DeepEqual(got, want) {
		t.Errorf("step log %v, want the advancer's %v", got, want)
	}
	if !reflect.DeepEqual(e.steps, old.steps) {
		t.Errorf("step hooks %v, want the advancer's %v", e.steps, old.steps)
	}
	if e.stats[orchestrator.StatusProcessed] != 1 || old.stats[orchestrator.StatusProcessed] != 1 {
		t.Errorf("messages processed: %v (advancer alone %v), want 1 each", e.stats, old.stats)
	}
	if st, ost := e.stockOf("sku-1"), old.stockOf("sku-1"); st != ost {
		t.Errorf("stock %+v, want the advancer's %+v", st, ost)
	}
	for _, typ := range []string{outbox.TypeSagaAdvance, outbox.TypeOrderCreated, outbox.TypeOrderConfirmed} {
		if got, want := e.disp.count(typ), old.disp.count(typ); got != want {
			t.Errorf("%s dispatched %d times, want %d", typ, got, want)
		}
	}
}

// TestStartCompensatesARejectionInTheOrdersTransaction: an order whose
// stock is short is cancelled in the transaction that creates it, its saga
// compensated with the step log and hooks of the advancer, the stock
// untouched, no command row written, and order.cancelled queued behind
// order.created.
func TestStartCompensatesARejectionInTheOrdersTransaction(t *testing.T) {
	old := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 1}})
	_, oldSaga := old.place(item("sku-1", 2, 100))
	old.deliver(chaos{})

	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 1}}, nil)
	orderID, sagaID := e.place(item("sku-1", 2, 100))
	if o := e.order(orderID); o.Status != order.StatusCancelled {
		t.Errorf("order after POST: %s, want CANCELLED", o.Status)
	}
	s := e.saga(sagaID)
	if os := old.saga(oldSaga); s.State != saga.StateCompensated || s.State != os.State || s.Data.FailureReason != os.Data.FailureReason {
		t.Errorf("saga after POST: %s %q, want the advancer's %s %q", s.State, s.Data.FailureReason, os.State, os.Data.FailureReason)
	}
	if got, want := e.trail(sagaID), old.trail(oldSaga); !reflect.DeepEqual(got, want) {
		t.Errorf("step log %v, want the advancer's %v", got, want)
	}
	if !reflect.DeepEqual(e.steps, old.steps) {
		t.Errorf("step hooks %v, want the advancer's %v", e.steps, old.steps)
	}
	if st := e.stockOf("sku-1"); st.Available != 1 || st.Reserved != 0 || st.Sold != 0 {
		t.Errorf("stock %+v, want untouched", st)
	}
	if cmds := e.sagaCommands(); len(cmds) != 0 || len(e.queue) != 0 {
		t.Errorf("command rows %+v, %d dispatched: want none", cmds, len(e.queue))
	}
	var created, cancelled []outbox.Event
	e.view(func(ctx context.Context, tx store.Tx) error {
		due, err := tx.ListOutboxDue(ctx, 0, e.clock.Now().Add(time.Hour), 100)
		for _, r := range due {
			if r.EventType == outbox.TypeOrderCancelled {
				cancelled = append(cancelled, r)
			}
		}
		return err
	})
	for _, r := range e.disp.all {
		switch r.EventType {
		case outbox.TypeOrderCreated:
			created = append(created, r)
		case outbox.TypeOrderCancelled:
			t.Errorf("order.cancelled dispatched by the request, ahead of the relay: %+v", r)
		}
	}
	if len(created) != 1 || len(cancelled) != 1 || cancelled[0].LeaseOwner != "" {
		t.Errorf("order.created dispatched %d, order.cancelled pending for the relay %+v", len(created), cancelled)
	}
	e.deliver(chaos{}) // nothing left to run
	if len(e.stats) != 0 {
		t.Errorf("messages handled: %v", e.stats)
	}
}

// failingStore fails every transaction after its closure succeeded (a crash
// before the commit: the store rolls back), while fail is set.
type failingStore struct {
	store.Store
	fail bool
}

var errBeforeCommit = errors.New("test: crash before commit")

func (s *failingStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if s.fail {
			return errBeforeCommit
		}
		return nil
	})
}

// TestStartCrashLeavesNothing: a POST whose transaction does not commit
// leaves no key, order, saga, reservation or row, observes no step and
// dispatches nothing; the retried POST does the whole of it once.
func TestStartCrashLeavesNothing(t *testing.T) {
	fs := &failingStore{fail: true}
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, func(s store.Store) store.Store { fs.Store = s; return fs })
	cmd := orders.CreateCommand{Caller: identity.Identity{Subject: "client-1"}, Key: "key-1",
		Request: order.Request{CustomerID: "cust-1", Currency: "RUB", Items: []order.Item{item("sku-1", 2, 100)}}}
	if _, err := e.orders.Create(context.Background(), cmd); !errors.Is(err, errBeforeCommit) {
		t.Fatalf("create: %v, want the crash", err)
	}
	e.view(func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetIdempotencyKey(ctx, "client-1", "key-1"); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("key after a crash: %v", err)
		}
		for _, st := range []saga.State{saga.StatePending, saga.StateRunning, saga.StateCompensating, saga.StateCompensated} {
			if l, err := tx.ListSagasByState(ctx, st, time.Time{}, 10); err != nil || len(l) != 0 {
				t.Errorf("%s sagas after a crash: %d (%v)", st, len(l), err)
			}
		}
		if due, err := tx.ListOutboxDue(ctx, 0, e.clock.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
			t.Errorf("outbox rows after a crash: %d (%v)", len(due), err)
		}
		return nil
	})
	if st := e.stockOf("sku-1"); st.Available != 10 || st.Reserved != 0 {
		t.Errorf("stock after a crash: %+v", st)
	}
	if len(e.steps) != 0 || len(e.disp.all) != 0 {
		t.Errorf("after a crash: step hooks %v, %d rows dispatched", e.steps, len(e.disp.all))
	}

	fs.fail = false
	resp, err := e.orders.Create(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if st := e.stockOf("sku-1"); st.Reserved != 2 {
		t.Errorf("stock after the retry: %+v", st)
	}
	if s := e.saga(resp.SagaID); s.Step != 2 || len(e.trail(resp.SagaID)) != 2 || len(e.steps) != 2 {
		t.Errorf("saga after the retry: step %d, log %v, hooks %v", s.Step, e.trail(resp.SagaID), e.steps)
	}
}

// rerunStore runs every transaction's closure twice: the first run is
// rolled back (as YDB reruns a closure whose optimistic commit failed).
type rerunStore struct{ store.Store }

var errRerun = errors.New("test: rerun")

func (s rerunStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	err := s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errRerun
	})
	if !errors.Is(err, errRerun) {
		return err
	}
	return s.Store.InTx(ctx, fn)
}

// TestStartRerunOfTheTransaction: a transaction run twice commits one
// start: one reservation, one step-log line per step, one command row,
// the hooks called once, and the ids the second run wrote are those of the
// first (drawn before the transaction).
func TestStartRerunOfTheTransaction(t *testing.T) {
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, func(s store.Store) store.Store { return rerunStore{s} })
	_, sagaID := e.place(item("sku-1", 2, 100))
	if st := e.stockOf("sku-1"); st.Reserved != 2 || st.Available != 8 {
		t.Errorf("stock %+v, want 2 reserved once", st)
	}
	if got := e.trail(sagaID); len(got) != 2 || len(e.steps) != 2 || e.steps["reserve_inventory/forward/succeeded"] != 1 {
		t.Errorf("log %v, hooks %v", got, e.steps)
	}
	if cmds := e.sagaCommands(); len(cmds) != 1 || len(e.queue) != 1 || e.queue[0].msg.EventID != e.disp.all[len(e.disp.all)-1].ID {
		t.Errorf("command rows %+v, %d dispatched", cmds, len(e.queue))
	}
	e.deliver(chaos{})
	if s := e.saga(sagaID); s.State != saga.StateCompleted {
		t.Errorf("saga %s", s.State)
	}
}

// TestStartReplay: a repeated POST returns the stored response (the order
// as created, PENDING) and starts nothing again.
func TestStartReplay(t *testing.T) {
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, nil)
	cmd := orders.CreateCommand{Caller: identity.Identity{Subject: "client-1"}, Key: "key-1",
		Request: order.Request{CustomerID: "cust-1", Currency: "RUB", Items: []order.Item{item("sku-1", 2, 100)}}}
	first, err := e.orders.Create(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.orders.Create(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Status != first.Status || string(again.Body) != string(first.Body) || again.Location != first.Location {
		t.Errorf("replay %+v, want the stored %+v", again, first)
	}
	var o order.View
	if err := json.Unmarshal(first.Body, &o); err != nil || o.Status != order.StatusPending {
		t.Errorf("stored response: order %s (%v), want PENDING", o.Status, err)
	}
	if st := e.stockOf("sku-1"); st.Reserved != 2 || len(e.steps) != 2 || len(e.sagaCommandsOf()) != 1 {
		t.Errorf("after a replay: stock %+v, hooks %v", st, e.steps)
	}
}

// sagaCommandsOf is sagaCommands for the sagas the env did not place
// itself (Create called directly): every saga.advance row in the store.
func (e *env) sagaCommandsOf() []outbox.Event {
	e.t.Helper()
	var rows []outbox.Event
	e.view(func(ctx context.Context, tx store.Tx) error {
		due, err := tx.ListOutboxDue(ctx, 0, e.clock.Now().Add(time.Hour), 100)
		for _, r := range due {
			if r.EventType == outbox.TypeSagaAdvance {
				rows = append(rows, r)
			}
		}
		return err
	})
	for _, r := range e.disp.all {
		if r.EventType == outbox.TypeSagaAdvance {
			rows = append(rows, r)
		}
	}
	return rows
}

// TestStartAndTheCrashHook: a crash injected after a step run in the
// order's transaction (orchestrator.Faults.CrashAfter) is a crash of that
// transaction: the new order fails and nothing of it is written; the same
// request again, without the crash, creates the order once.
func TestStartAndTheCrashHook(t *testing.T) {
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, nil)
	var called []string
	e.afterStep = func(step string, _ saga.Direction) error {
		called = append(called, step)
		return errors.New("crash")
	}
	req := orders.CreateCommand{Caller: identity.Identity{Subject: "client-1"}, Key: "crash-1",
		Request: order.Request{CustomerID: "cust-1", Currency: "RUB", Items: []order.Item{item("sku-1", 2, 100)}}}
	if _, err := e.orders.Create(context.Background(), req); err == nil {
		t.Fatalf("the order's transaction committed through a crash after %v", called)
	}
	if len(called) == 0 {
		t.Fatal("the crash hook was not asked for the steps run in the order's transaction")
	}
	if rows := e.outboxRows(outbox.TypeSagaAdvance); len(rows) != 0 {
		t.Fatalf("a crashed order's transaction left saga commands: %d", len(rows))
	}
	if st := e.stockOf("sku-1"); st.Reserved != 0 || st.Available != 10 {
		t.Fatalf("a crashed order's transaction left stock %+v", st)
	}
	e.afterStep = nil
	resp, err := e.orders.Create(context.Background(), req)
	if err != nil || resp.Replayed {
		t.Fatalf("the same request after the crash: %+v %v, want a new order", resp, err)
	}
	if s := e.saga(resp.SagaID); s.Step != 2 || len(e.trail(resp.SagaID)) != 2 {
		t.Errorf("saga after POST: step %d, log %v", s.Step, e.trail(resp.SagaID))
	}
}

// TestStartDeclinedWithOneStepPerMessage: with MaxChainSteps 1
// (one step per message) nothing runs in the order's transaction: the
// saga is stored pending with its first command, and the advancer runs
// every step.
func TestStartDeclinedWithOneStepPerMessage(t *testing.T) {
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, nil)
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 })
	orderID, sagaID := e.place(item("sku-1", 2, 100))
	if s := e.saga(sagaID); s.State != saga.StatePending || s.Step != 0 || len(e.trail(sagaID)) != 0 || len(e.steps) != 0 {
		t.Errorf("saga after POST: %s step %d, log %v, hooks %v: want pending, nothing run", s.State, s.Step, e.trail(sagaID), e.steps)
	}
	if st := e.stockOf("sku-1"); st.Reserved != 0 {
		t.Errorf("stock reserved during POST: %+v", st)
	}
	if cmds := e.sagaCommands(); len(cmds) != 1 || cmds[0].Reason != saga.ReasonCreated || cmds[0].Step != 0 {
		t.Errorf("command rows %+v, want the first command alone", cmds)
	}
	e.deliver(chaos{})
	if o := e.order(orderID); o.Status != order.StatusConfirmed {
		t.Errorf("order %s", o.Status)
	}
}
