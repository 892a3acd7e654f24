package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/resilience"
)

// Step is one row of an executable saga table: the step and its
// compensation (names, timeout, retry budget: saga.StepDef) with the
// actions that do and undo it. Adding a step to a saga is adding a row.
type Step struct {
	saga.StepDef
	Do, Undo Action
}

// Action is what runs a step or a compensation: exactly one of Call and
// InTx is set.
type Action struct {
	// Call calls a participant, outside any transaction, under the step's
	// timeout. The participants are idempotent by saga id, so a call whose
	// save was lost (a crash) is made again harmlessly.
	Call func(ctx context.Context, p Participants, inst saga.Instance) Effect
	// InTx runs inside the step's save transaction, atomically with the
	// saga's new state (an order change, a reservation of the local stock
	// participant). Its error is a store failure (the transaction fails);
	// the step's own outcome is in the Effect.
	InTx InTxFunc
}

// InTxFunc is an action that runs inside the step's save transaction. k
// holds rows earlier steps of this invocation committed; the action may use
// them instead of reading them, and records the rows it leaves.
type InTxFunc func(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, now time.Time) (Effect, error)

// Known holds rows that earlier chained steps of this invocation committed
// (read or written in their save transactions), so a later step of the
// chain updates them without reading them again. Every such update expects
// the version the earlier step saw: if anyone changed the row since, the
// update fails with Conflict and the step's transaction with it (nothing is
// decided on a stale row), and the step resumes from a fresh delivery,
// which reads everything. A nil field is unknown; the zero Known knows
// nothing (the first step of a message).
type Known struct {
	order       *order.Order
	reservation *inventory.Reservation
}

// Effect is what an action did.
type Effect struct {
	// Err is the step's outcome: nil when done; Rejected, Invalid or any
	// other error as decide classifies it.
	Err error
	// Skipped: a compensation that had nothing to undo.
	Skipped bool
	// change is an order update made by an InTx action, with its event.
	change *orderChange
}

// Participants are the ports the Call actions use.
type Participants struct {
	Inventory Inventory
	Payments  Payments
}

// Steps is an executable step table, in order (saga.Instance.Step indexes it).
type Steps []Step

// Table describes s for code that only names steps (views, validation).
func (s Steps) Table() saga.Table {
	t := make(saga.Table, len(s))
	for i, st := range s {
		t[i] = st.StepDef
	}
	return t
}

// CheckLease refuses a saga lease that does not exceed the longest step
// timeout of steps: a second advancer could take a saga whose step still
// runs.
func CheckLease(lease time.Duration, steps Steps) error {
	if longest := steps.Table().LongestTimeout(); lease <= longest {
		return apperr.New(apperr.Invalid, "config: SAGA_LEASE (%s) must exceed the longest saga step timeout (%s), or a second advancer could take a saga whose step still runs", lease, longest)
	}
	return nil
}

// CheckBreakerThreshold reports (Invalid) a circuit breaker threshold
// (consecutive failures that open it) above the fewest attempts of any step
// or compensation of steps that calls a participant: a lone saga would spend
// all that step's attempts on failures that leave the breaker closed, then
// hold its last attempt (one call per backoff cap) until the breaker opens,
// so an outage costs more provider calls, and the breaker's refusals come
// later, than with the threshold at most the attempts. The outage guarantee
// itself does not depend on it (decide holds the last attempt for the
// outage bound). app.New logs it as a warning.
func CheckBreakerThreshold(threshold int, steps Steps) error {
	for _, st := range steps {
		for _, c := range []struct {
			name     string
			act      Action
			attempts int
		}{{st.Name, st.Do, st.MaxAttempts}, {st.Compensation, st.Undo, st.MaxCompensationAttempts}} {
			if c.act.Call != nil && threshold > c.attempts {
				return apperr.New(apperr.Invalid, "config: PAYMENT_BREAKER_THRESHOLD (%d) exceeds the %d attempts of saga step %q: a lone order spends them all before the breaker opens and then asks the provider once per backoff cap until it does", threshold, c.attempts, c.name)
			}
		}
	}
	return nil
}

// action is the action of step i in direction dir.
func (s Steps) action(i int, dir saga.Direction) Action {
	if dir == saga.Compensate {
		return s[i].Undo
	}
	return s[i].Do
}

// CreateOrderSaga is the step table of CreateOrderSaga. Only completed
// steps are compensated, in reverse order. confirm_order is last so that
// nothing after it can fail; uncompensatable actions (notifications) belong
// after it, driven by the order.confirmed event. create_order,
// confirm_order and cancel_order only change the order, and
// reserve_inventory reserves stock of the local stock participant, inside
// the step's save transaction.
var CreateOrderSaga = Steps{
	{StepDef: saga.StepDef{Name: saga.StepCreateOrder, Compensation: saga.StepCancelOrder,
		Timeout: 5 * time.Second, RetryPolicy: saga.RetryPolicy{MaxAttempts: 5, MaxCompensationAttempts: 10}},
		Do: Action{InTx: onOrder(saga.Forward, checkPending)}, Undo: Action{InTx: onOrder(saga.Compensate, cancelOrder)}},
	{StepDef: saga.StepDef{Name: saga.StepReserveInventory, Compensation: saga.StepReleaseInventory,
		Timeout: 5 * time.Second, RetryPolicy: saga.RetryPolicy{MaxAttempts: 5, MaxCompensationAttempts: 10}},
		Do: Action{InTx: reserve}, Undo: Action{Call: release}},
	{StepDef: saga.StepDef{Name: saga.StepProcessPayment, Compensation: saga.StepRefundPayment,
		Timeout: 10 * time.Second, RetryPolicy: saga.RetryPolicy{MaxAttempts: 5, MaxCompensationAttempts: 10}},
		Do: Action{Call: charge}, Undo: Action{Call: refund}},
	// cancel_order compensating confirm_order has nothing to do: confirming
	// commits with the saga state, so a saga compensating it never
	// confirmed the order. The order is cancelled once, by the compensation
	// of create_order, after the stock and the money are back.
	{StepDef: saga.StepDef{Name: saga.StepConfirmOrder, Compensation: saga.StepCancelOrder,
		Timeout: 5 * time.Second, RetryPolicy: saga.RetryPolicy{MaxAttempts: 5, MaxCompensationAttempts: 10}},
		Do: Action{InTx: onOrder(saga.Forward, confirm)}, Undo: Action{InTx: nothingToUndo}},
}

// reserve is reserve_inventory: the reservation commits (or rolls back)
// with the step's save, so it needs no transaction of its own. It stays
// idempotent by saga id: a re-run finds the recorded reservation.
func reserve(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, now time.Time) (Effect, error) {
	lines := make([]inventory.Line, len(inst.Data.Items))
	for i, it := range inst.Data.Items {
		lines[i] = inventory.Line{SKU: it.SKU, Quantity: it.Quantity}
	}
	r, outcome, err := p.Inventory.ReserveIn(ctx, tx, inst.ID, inst.Data.OrderID, lines, now)
	if err == nil && r.ID == inst.ID {
		k.reservation = &r
	}
	return Effect{Err: outcome}, err
}

func release(ctx context.Context, p Participants, inst saga.Instance) Effect {
	released, err := p.Inventory.Release(ctx, inst.ID)
	return Effect{Err: err, Skipped: !released}
}

func charge(ctx context.Context, p Participants, inst saga.Instance) Effect {
	d := inst.Data
	return Effect{Err: p.Payments.Charge(ctx, inst.ID, d.OrderID, d.TotalMinor, d.Currency)}
}

func refund(ctx context.Context, p Participants, inst saga.Instance) Effect {
	d := inst.Data
	refunded, err := p.Payments.Refund(ctx, inst.ID, d.OrderID, d.TotalMinor, d.Currency)
	return Effect{Err: err, Skipped: !refunded}
}

// orderFn is an InTx action on the saga's order.
type orderFn func(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, o order.Order, now time.Time) (Effect, error)

// onOrder reads the saga's order for fn (unless an earlier chained step
// left it in k) and records the order fn leaves in k. A missing order fails
// a forward step (Invalid) and is nothing to undo for a compensation.
func onOrder(dir saga.Direction, fn orderFn) InTxFunc {
	return func(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, now time.Time) (Effect, error) {
		var o order.Order
		var err error
		if k.order != nil && k.order.ID == inst.Data.OrderID {
			o = *k.order
		} else {
			o, err = tx.GetOrder(ctx, inst.Data.OrderID)
		}
		if apperr.Is(err, apperr.NotFound) {
			if dir == saga.Compensate {
				return Effect{Skipped: true}, nil
			}
			return Effect{Err: apperr.New(apperr.Invalid, "order %s does not exist", inst.Data.OrderID)}, nil
		}
		if err != nil {
			return Effect{}, err
		}
		eff, err := fn(ctx, tx, p, k, inst, o, now)
		switch {
		case err != nil:
		case eff.change != nil:
			k.order = &eff.change.order
		default:
			k.order = &o
		}
		return eff, err
	}
}

// checkPending is create_order: the API wrote the order with the saga, so
// the step only checks it is still PENDING.
func checkPending(_ context.Context, _ store.Tx, _ Participants, _ *Known, _ saga.Instance, o order.Order, _ time.Time) (Effect, error) {
	if o.Status != order.StatusPending {
		return Effect{Err: apperr.New(apperr.Invalid, "order is %s, not PENDING", o.Status)}, nil
	}
	return Effect{}, nil
}

// cancelOrder is create_order's compensation: the order is CANCELLED (an
// order already final is skipped).
func cancelOrder(ctx context.Context, tx store.Tx, _ Participants, _ *Known, inst saga.Instance, o order.Order, now time.Time) (Effect, error) {
	return transition(ctx, tx, o, saga.Compensate, order.StatusCancelled, inst.Data.FailureReason, outbox.TypeOrderCancelled, now)
}

// confirm is confirm_order: the reserved units are sold in the transaction
// that confirms (the reservation as reserve_inventory stored it, when that
// step ran earlier in this invocation).
func confirm(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, o order.Order, now time.Time) (Effect, error) {
	if o.Status == order.StatusConfirmed {
		return Effect{}, nil // confirmed by an earlier run; nothing more to do
	}
	known := k.reservation
	if known != nil && known.ID != inst.ID {
		known = nil
	}
	err := p.Inventory.SettleIn(ctx, tx, inst.ID, known, now)
	k.reservation = nil // settled (or refused): no longer as known
	if err != nil {
		if !apperr.Is(err, apperr.Invalid) {
			return Effect{}, err
		}
		return Effect{Err: err}, nil // released or rejected stock cannot be sold: the step fails
	}
	return transition(ctx, tx, o, saga.Forward, order.StatusConfirmed, "", outbox.TypeOrderConfirmed, now)
}

func nothingToUndo(context.Context, store.Tx, Participants, *Known, saga.Instance, time.Time) (Effect, error) {
	return Effect{Skipped: true}, nil
}

// run executes an external step or compensation under its timeout. An
// InTx action is left for the save transaction (run.inTx is set).
func (a *Advancer) run(ctx context.Context, inst saga.Instance) (r stepRun) {
	steps := a.c.Steps
	name, dir := stepName(steps.Table(), inst)
	r = stepRun{name: name, dir: dir}
	start := time.Now()
	defer func() { r.duration = time.Since(start) }()
	act := steps.action(inst.Step, dir)
	switch {
	case act.InTx != nil:
		r.inTx = act.InTx
		return r
	case act.Call == nil:
		r.err = apperr.New(apperr.Internal, "step %q has no %s action", name, dir)
		return r
	}
	r.call = true
	sctx, cancel := context.WithTimeout(ctx, steps[inst.Step].Timeout)
	defer cancel()
	if inst.Data.Waits > 0 {
		// The step has waited for a participant that seemed down (its
		// breaker open, or its last attempt held): its runs are spaced by
		// those waits, so each makes one call, not a burst of quick
		// retries into an outage.
		sctx = resilience.OneAttempt(sctx)
	}
	eff := act.Call(sctx, a.participants(), inst)
	r.err, r.skipped = eff.Err, eff.Skipped
	return r
}

// orderChange is an order update made by an InTx action, with its event.
type orderChange struct {
	order     order.Order
	eventType string
}

// runInTx runs r's InTx action inside the save transaction. A store
// failure is returned as err (the transaction fails); the step's own
// outcome goes into r.
func runInTx(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, r *stepRun, now time.Time) (*orderChange, error) {
	eff, err := r.inTx(ctx, tx, p, k, inst, now)
	if err != nil {
		return nil, err
	}
	r.err, r.skipped = eff.Err, eff.Skipped
	return eff.change, nil
}

// transition moves o to status and stores it. A terminal order is left as
// it is: for a compensation that is "skipped", for a forward step an error.
func transition(ctx context.Context, tx store.Tx, o order.Order, dir saga.Direction, to order.Status, reason, eventType string, now time.Time) (Effect, error) {
	prev := o.Version
	if !o.Transition(to, reason, now) {
		if dir == saga.Compensate {
			return Effect{Skipped: true}, nil
		}
		return Effect{Err: apperr.New(apperr.Invalid, "order is %s; cannot move it to %s", o.Status, to)}, nil
	}
	if err := tx.UpdateOrder(ctx, o, prev); err != nil {
		return Effect{}, err
	}
	return Effect{change: &orderChange{order: o, eventType: eventType}}, nil
}
