package orchestrator_test

import (
	"context"
	"ordersaga/shared/domain/apperr"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// outboxRows lists every outbox row of the given type.
func (e *env) outboxRows(eventType string) []outbox.Event {
	e.t.Helper()
	var rows []outbox.Event
	ids := map[string]bool{}
	e.view(func(ctx context.Context, tx store.Tx) error {
		// Every row the advancer or the API wrote is named in the step log
		// (message_id) or was dispatched; read both kinds back. A step
		// saved in the transaction of the step before it names a command
		// that was never written (Advancer.saveIn).
		for _, s := range e.sagas {
			log, err := tx.ListSagaLog(ctx, s)
			if err != nil {
				return err
			}
			for _, l := range log {
				ids[l.MessageID] = true
			}
		}
		for _, d := range e.disp.all {
			ids[d.ID] = true
		}
		for id := range ids {
			r, err := tx.GetOutbox(ctx, id)
			if apperr.Is(err, apperr.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if r.EventType == eventType {
				rows = append(rows, r)
			}
		}
		return nil
	})
	return rows
}

// TestChainingRunsTheSagaInOneMessage: one delivered message carries a saga
// through all its steps; each step still has its own step-log line and
// inbox entry (the command row it consumed in place, marked published), and
// the queue carries three messages for the order: its first command,
// order.created and order.confirmed.
func TestChainingRunsTheSagaInOneMessage(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	e.deliver(chaos{})
	if o := e.order(orderID); o.Status != order.StatusConfirmed {
		t.Fatalf("order %s", o.Status)
	}
	if e.stats[orchestrator.StatusProcessed] != 1 {
		t.Errorf("messages handled: %v, want one", e.stats)
	}
	sent := e.disp.count(outbox.TypeSagaAdvance) + e.disp.count(outbox.TypeOrderCreated) + e.disp.count(outbox.TypeOrderConfirmed)
	if sent != 3 || len(e.disp.all) != 3 || e.relayed != 0 {
		t.Errorf("%d messages dispatched (%d rows, %d relayed), want 3", sent, len(e.disp.all), e.relayed)
	}
	var log []saga.LogEntry
	e.view(func(ctx context.Context, tx store.Tx) (err error) { log, err = tx.ListSagaLog(ctx, sagaID); return err })
	if len(log) != len(orchestrator.CreateOrderSaga) {
		t.Fatalf("step log %d lines", len(log))
	}
	seen := map[string]bool{}
	for i, l := range log {
		if l.MessageID == "" || seen[l.MessageID] {
			t.Errorf("step %d has message id %q: each step needs its own", i, l.MessageID)
		}
		seen[l.MessageID] = true
	}
	for _, r := range e.outboxRows(outbox.TypeSagaAdvance) {
		if r.Status != outbox.StatusPublished || r.LeaseOwner != "" {
			t.Errorf("command row %s is %s (lease %q): consumed rows must be closed", r.ID, r.Status, r.LeaseOwner)
		}
	}
	// A late copy of any consumed command is harmless.
	for _, r := range e.outboxRows(outbox.TypeSagaAdvance) {
		res, err := e.adv.Handle(context.Background(), orchestrator.Message{EventID: r.ID, Body: r.Payload, Attributes: r.Attributes()})
		if err != nil || res.Status == orchestrator.StatusProcessed {
			t.Errorf("late copy of %s: %+v %v", r.ID, res, err)
		}
	}
	e.checkInvariants()
}

// TestStoreOnlyStepsAreSavedWithTheStepBefore: a chained step whose
// action runs inside a save transaction is saved in the transaction of the
// step before it, so a confirmed order's saga writes two command rows (the
// delivered one and the one that stands for process_payment, the only step
// with an external call), not one per step; each step keeps its own log
// line. A step table decorated with faults and crash points
// (orchestrator.InjectFaults, here firing none) folds the same way.
func TestStoreOnlyStepsAreSavedWithTheStepBefore(t *testing.T) {
	for _, tc := range []struct {
		name      string
		afterStep bool
		rows      int
	}{{"folded", false, 2}, {"with crash points", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
			if tc.afterStep {
				asked := 0
				e.afterStep = func(string, saga.Direction) error { asked++; return nil }
				t.Cleanup(func() {
					if asked != len(orchestrator.CreateOrderSaga) {
						t.Errorf("crash point asked %d times, want once per step (%d)", asked, len(orchestrator.CreateOrderSaga))
					}
				})
			}
			orderID, sagaID := e.place(item("sku-1", 1, 100))
			e.deliver(chaos{})
			if o := e.order(orderID); o.Status != order.StatusConfirmed {
				t.Fatalf("order %s", o.Status)
			}
			if got := len(e.outboxRows(outbox.TypeSagaAdvance)); got != tc.rows {
				t.Errorf("%d command rows, want %d", got, tc.rows)
			}
			if got := e.trail(sagaID); len(got) != len(orchestrator.CreateOrderSaga) {
				t.Errorf("trail %v, want a line per step", got)
			}
			if st := e.stockOf("sku-1"); st.Reserved != 0 || st.Sold != 1 || st.Available != 9 {
				t.Errorf("stock %+v: one unit sold once", st)
			}
			e.checkInvariants()
		})
	}
}

// TestChainingStopsAtTheInvocationBudget: with too little time left before
// the invocation's deadline, the advancer runs one step and hands the next
// to the queue (dispatched at once, no lease kept).
func TestChainingStopsAtTheInvocationBudget(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	_, sagaID := e.place(item("sku-1", 1, 100))
	d := e.queue[0]
	e.queue = nil
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if res, err := e.adv.Handle(ctx, d.msg); err != nil || res.Status != orchestrator.StatusProcessed {
		t.Fatalf("%+v %v", res, err)
	}
	if got := e.trail(sagaID); len(got) != 1 {
		t.Fatalf("trail %v, want one step", got)
	}
	if s := e.saga(sagaID); s.LeaseOwner != "" {
		t.Errorf("the lease must be released when the next step goes through the queue: %+v", s)
	}
	e.pump()
	if len(e.queue) != 1 {
		t.Fatalf("queue %d, want the next command dispatched", len(e.queue))
	}
	e.deliver(chaos{})
	if s := e.saga(sagaID); s.State != saga.StateCompleted {
		t.Errorf("saga %s", s.State)
	}
}
