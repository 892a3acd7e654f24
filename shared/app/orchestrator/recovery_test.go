package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

func (e *env) runRecovery() orchestrator.Report {
	e.t.Helper()
	rep, err := e.rec.Run(context.Background())
	if err != nil {
		e.t.Fatalf("recovery: %v", err)
	}
	e.pump()
	return rep
}

// TestRecoveryFinishesAbandonedSagas: an advancer dies after a step's
// effect (its lease is still set and its message was acknowledged), and
// another saga loses its next message between steps. Recovery resends
// the first as soon as its lease lapses and the second once it is stuck
// (StuckAfter past due), and neither earlier.
func TestRecoveryFinishesAbandonedSagas(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 }) // the per-message protocol: one step per delivered message
	crashed := false
	e.afterStep = func(step string, _ saga.Direction) error {
		if step == saga.StepProcessPayment && !crashed {
			crashed = true
			return errCrash
		}
		return nil
	}
	o1, s1 := e.place(item("sku-1", 1, 100))
	// Deliver until the crash; the crashed message is acknowledged (lost).
	for !crashed && len(e.queue) > 0 {
		d := e.queue[0]
		e.queue = e.queue[1:]
		_, _ = e.adv.Handle(context.Background(), d.msg)
		e.pump()
	}
	if !crashed || len(e.queue) != 0 {
		t.Fatalf("setup: crashed=%v queue=%d", crashed, len(e.queue))
	}
	o2, s2 := e.place(item("sku-1", 2, 100))
	d := e.queue[0] // saga 2's first command: run create_order, then lose the next one
	e.queue = nil
	if res, err := e.adv.Handle(context.Background(), d.msg); err != nil || res.Status != orchestrator.StatusProcessed {
		t.Fatalf("saga 2 first step: %+v %v", res, err)
	}
	_ = e.disp.take()

	if s := e.saga(s1); s.LeaseOwner == "" || s.State != saga.StateRunning || s.Step != 2 {
		t.Fatalf("saga 1 should hold a dead lease at process_payment: %+v", s)
	}
	if rep := e.runRecovery(); rep.Resent != 0 {
		t.Fatalf("resent %d sagas that are not stuck yet", rep.Resent)
	}
	// Saga 1's lease lapses: its advancer died mid-step, so it is resent
	// at once (no StuckAfter wait); saga 2 is not stuck yet.
	e.clock.Advance(e.adv.Config().Lease + time.Second)
	if rep := e.runRecovery(); rep.Resent != 1 || len(e.queue) != 1 {
		t.Fatalf("want only saga 1 (lapsed lease) resent: %+v, queue %d", rep, len(e.queue))
	}
	if c, _ := saga.DecodeCommand(e.queue[0].msg.Body); c.SagaID != s1 {
		t.Fatalf("resent %s, want saga 1", c.SagaID)
	}
	e.clock.Advance(e.rec.Config().StuckAfter)
	// Saga 2 is stuck now; saga 1's resend is still undelivered, so it is
	// stuck again and gets a second command with the same token.
	if rep := e.runRecovery(); rep.Resent != 2 || len(e.queue) != 3 {
		t.Fatalf("want sagas 1 and 2 resent: %+v, queue %d", rep, len(e.queue))
	}
	old := d // the old first command of saga 2, delivered late
	e.queue = append(e.queue, old)
	e.deliver(chaos{shuffle: true, duplicate: 1})

	for _, o := range []string{o1, o2} {
		if got := e.order(o).Status; got != order.StatusConfirmed {
			t.Errorf("order %s: %s, want CONFIRMED", o, got)
		}
	}
	if got := e.trail(s1); len(got) != 4 {
		t.Errorf("saga 1 trail %v: the crashed step must be logged once", got)
	}
	if got := e.trail(s2); len(got) != 4 {
		t.Errorf("saga 2 trail %v", got)
	}
	if c := e.sim.Counters(); c.Charges != 2 {
		t.Errorf("provider charges %d, want 2", c.Charges)
	}
	e.checkInvariants()
	if rep := e.runRecovery(); rep.Resent != 0 || rep.Reconciled != 0 {
		t.Errorf("second pass did work: %+v", rep)
	}
}

// TestRecoveryReconcilesDivergedOrders breaks orders behind their finished
// sagas' backs and checks recovery repairs them, once.
func TestRecoveryReconcilesDivergedOrders(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10, "sku-out": 0}})
	okOrder, _ := e.place(item("sku-1", 1, 100))
	badOrder, _ := e.place(item("sku-out", 1, 100))
	e.deliver(chaos{})
	tamper := func(id string, st order.Status) {
		err := e.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			o, err := tx.GetOrder(ctx, id)
			if err != nil {
				return err
			}
			prev := o.Version
			o.Status, o.Version = st, prev+1
			return tx.UpdateOrder(ctx, o, prev)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	tamper(okOrder, order.StatusPending)
	tamper(badOrder, order.StatusConfirmed)
	confirmed, cancelled := e.disp.count(outbox.TypeOrderConfirmed), e.disp.count(outbox.TypeOrderCancelled)

	rep := e.runRecovery()
	if rep.Reconciled != 2 || rep.ReconcileChecked != 2 {
		t.Fatalf("report %+v, want 2 reconciled of 2", rep)
	}
	if got := e.order(okOrder); got.Status != order.StatusConfirmed {
		t.Errorf("ok order: %s", got.Status)
	}
	if got := e.order(badOrder); got.Status != order.StatusCancelled || got.StatusReason == "" {
		t.Errorf("cancelled order: %s %q", got.Status, got.StatusReason)
	}
	if e.disp.count(outbox.TypeOrderConfirmed) != confirmed+1 || e.disp.count(outbox.TypeOrderCancelled) != cancelled+1 {
		t.Error("repairs must announce the order's new status")
	}
	if rep := e.runRecovery(); rep.Reconciled != 0 {
		t.Errorf("second pass reconciled %d", rep.Reconciled)
	}
	e.checkInvariants()
}

func TestRecoveryReleasesKeysAndExpiresInbox(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	now := e.clock.Now()
	keys := []idempotency.Record{
		{Scope: "c", Key: "abandoned", Fingerprint: "f", Status: idempotency.StatusInProgress,
			LockedUntil: now.Add(-time.Second), CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)},
		{Scope: "c", Key: "expired", Fingerprint: "f", Status: idempotency.StatusCompleted,
			CreatedAt: now.Add(-25 * time.Hour), ExpiresAt: now.Add(-time.Hour)},
		{Scope: "c", Key: "working", Fingerprint: "f", Status: idempotency.StatusInProgress,
			LockedUntil: now.Add(time.Minute), CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		{Scope: "c", Key: "done", Fingerprint: "f", Status: idempotency.StatusCompleted,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
	}
	err := e.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, k := range keys {
			if err := tx.InsertIdempotencyKey(ctx, k); err != nil {
				return err
			}
		}
		if err := tx.InsertInbox(ctx, orchestrator.InboxConsumer, "old", now.Add(-8*24*time.Hour), now.Add(-time.Hour)); err != nil {
			return err
		}
		return tx.InsertInbox(ctx, orchestrator.InboxConsumer, "new", now, now.Add(time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := e.runRecovery()
	if rep.KeysReleased != 2 || rep.InboxDeleted != 1 {
		t.Fatalf("report %+v, want 2 keys released and 1 inbox entry deleted", rep)
	}
	e.view(func(ctx context.Context, tx store.Tx) error {
		for _, k := range keys {
			_, err := tx.GetIdempotencyKey(ctx, k.Scope, k.Key)
			gone := apperr.Is(err, apperr.NotFound)
			if want := k.Key == "abandoned" || k.Key == "expired"; gone != want {
				t.Errorf("key %s: gone=%v, want %v (%v)", k.Key, gone, want, err)
			}
		}
		return nil
	})
}
