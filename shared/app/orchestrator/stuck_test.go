package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// deadLetters lists the saga dead letters.
func (e *env) deadLetters() []dlq.DeadLetter {
	e.t.Helper()
	var list []dlq.DeadLetter
	e.view(func(ctx context.Context, tx store.Tx) (err error) {
		list, _, err = tx.ListDeadLetters(ctx, dlq.Filter{Source: dlq.SourceSaga}, dlq.Page{Limit: 100})
		return err
	})
	return list
}

// TestRecoveryGivesUpOnASagaThatNeverAdvances: every command of a saga is
// lost (as when the queue refuses it). Recovery resends it until no
// command was consumed for MaxWait, then fails it for good: the order is
// FAILED (with its event), a saga dead letter with error_type "stuck"
// exists, the report counts it, and later passes leave it alone — it does
// not loop forever.
func TestRecoveryGivesUpOnASagaThatNeverAdvances(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 3; c.MaxWait = 5 * time.Minute })
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	e.queue = nil // the first command is lost
	redriven, gaveUp := 0, 0
	for pass := 0; pass < 10; pass++ {
		e.clock.Advance(e.rec.Config().StuckAfter + e.adv.Config().Lease)
		rep := e.runRecovery()
		redriven += rep.Resent
		gaveUp += rep.GaveUp
		e.queue = nil // every resend is lost too
	}
	if redriven == 0 || gaveUp != 1 {
		t.Fatalf("resent %d times and gave up %d times, want some and 1", redriven, gaveUp)
	}
	s := e.saga(sagaID)
	if s.State != saga.StateFailed || s.FinishedAt.IsZero() || s.LastError == "" {
		t.Fatalf("saga %+v, want failed with an error", s)
	}
	if o := e.order(orderID); o.Status != order.StatusFailed {
		t.Errorf("order %s, want FAILED", o.Status)
	}
	if e.disp.count(outbox.TypeOrderFailed) != 1 {
		t.Error("the order's failure must be announced once")
	}
	dls := e.deadLetters()
	if len(dls) != 1 || dls[0].ErrorType != orchestrator.ErrorTypeStuck || dls[0].SagaID != sagaID || dls[0].Status != dlq.StatusOpen {
		t.Fatalf("dead letters %+v, want one open %q entry for the saga", dls, orchestrator.ErrorTypeStuck)
	}
	cmd, err := saga.DecodeCommand(dls[0].Payload)
	if err != nil || cmd.State != saga.StateCompensating || cmd.Step != s.Step {
		t.Errorf("dead letter payload %s (%v): a redrive must compensate from the stuck step", dls[0].Payload, err)
	}
}

// TestRecoveryCountResetsWhenTheSagaMoves: resends that get the saga
// moving reset the count, so a saga that is only slow never fails.
func TestRecoveryCountResetsWhenTheSagaMoves(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 }) // the per-message protocol: one step per delivered message
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 1 })
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	for step := 0; step < len(orchestrator.CreateOrderSaga); step++ {
		e.queue = nil // this step's command is lost...
		e.clock.Advance(e.rec.Config().StuckAfter + e.adv.Config().Lease)
		if rep := e.runRecovery(); rep.Resent != 1 || rep.GaveUp != 0 {
			t.Fatalf("step %d: %+v, want one resend", step, rep)
		}
		if len(e.queue) != 1 {
			t.Fatalf("step %d: queue %d", step, len(e.queue))
		}
		// ...the resend is delivered and runs exactly one step.
		d := e.queue[0]
		e.queue = e.queue[1:]
		if res, err := e.adv.Handle(context.Background(), d.msg); err != nil || res.Status != orchestrator.StatusProcessed {
			t.Fatalf("step %d: %+v %v", step, res, err)
		}
		e.pump()
	}
	if s := e.saga(sagaID); s.State != saga.StateCompleted {
		t.Fatalf("saga %s, want completed", s.State)
	}
	if o := e.order(orderID); o.Status != order.StatusConfirmed {
		t.Errorf("order %s", o.Status)
	}
	if len(e.deadLetters()) != 0 {
		t.Error("no dead letter expected")
	}
}
