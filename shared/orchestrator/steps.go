package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/inventory"
	"ordersaga/shared/order"
	"ordersaga/shared/outbox"
	"ordersaga/shared/saga"
	"ordersaga/shared/stock"
	"ordersaga/shared/store"
)

// internalStep reports whether a step only changes the order, which is done
// inside the save transaction (atomically with the saga state) instead of
// through a participant.
func internalStep(name string) bool {
	return name == saga.StepCreateOrder || name == saga.StepConfirmOrder || name == saga.StepCancelOrder
}

// run executes an external step or compensation under its timeout. Internal
// steps are left for the save transaction (run.err stays nil and
// run.pending is set), unless the Fault hook decides their outcome.
func (a *Advancer) run(ctx context.Context, inst saga.Instance) (r stepRun) {
	name, dir := stepName(a.steps(), inst)
	r = stepRun{name: name, dir: dir}
	start := time.Now()
	defer func() { r.duration = time.Since(start) }()
	if a.Fault != nil {
		if err := a.Fault(name, dir); err != nil {
			r.err = err
			return r
		}
	}
	if internalStep(name) {
		r.pending = true
		return r
	}
	sctx, cancel := context.WithTimeout(ctx, a.steps()[inst.Step].Timeout)
	defer cancel()
	d := inst.Data
	switch name {
	case saga.StepReserveInventory:
		lines := make([]inventory.Line, len(d.Items))
		for i, it := range d.Items {
			lines[i] = inventory.Line{SKU: it.SKU, Quantity: it.Quantity}
		}
		r.err = a.Inventory.Reserve(sctx, inst.ID, d.OrderID, lines)
	case saga.StepReleaseInventory:
		var released bool
		released, r.err = a.Inventory.Release(sctx, inst.ID)
		r.skipped = !released
	case saga.StepProcessPayment:
		r.err = a.Payments.Charge(sctx, inst.ID, d.OrderID, d.TotalMinor, d.Currency)
	case saga.StepRefundPayment:
		var refunded bool
		refunded, r.err = a.Payments.Refund(sctx, inst.ID, d.OrderID, d.TotalMinor, d.Currency)
		r.skipped = !refunded
	default:
		r.err = apperr.New(apperr.Internal, "no executor for step %q", name)
	}
	return r
}

// orderChange is an order update made by an internal step, with its event.
type orderChange struct {
	order     order.Order
	eventType string
}

// runInternal executes an internal step inside the save transaction. A
// store failure is returned as err (the transaction fails); the step's own
// outcome goes into r.
func runInternal(ctx context.Context, tx store.Tx, inst saga.Instance, r *stepRun, now time.Time) (*orderChange, error) {
	o, err := tx.GetOrder(ctx, inst.Data.OrderID)
	if apperr.Is(err, apperr.NotFound) {
		if r.dir == saga.Compensate {
			r.skipped = true
		} else {
			r.err = apperr.New(apperr.Invalid, "order %s does not exist", inst.Data.OrderID)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case r.name == saga.StepCreateOrder:
		if o.Status != order.StatusPending {
			r.err = apperr.New(apperr.Invalid, "order is %s, not PENDING", o.Status)
		}
		return nil, nil
	case r.name == saga.StepConfirmOrder:
		if o.Status == order.StatusConfirmed {
			return nil, nil // confirmed by an earlier run; nothing more to do
		}
		// The reserved units are sold in the transaction that confirms.
		if err := stock.Settle(ctx, tx, inst.ID, now); err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				return nil, err
			}
			r.err = err // released or rejected stock cannot be sold: the step fails
			return nil, nil
		}
		return transition(ctx, tx, o, order.StatusConfirmed, "", outbox.TypeOrderConfirmed, r, now)
	case inst.Step > 0:
		// cancel_order compensating confirm_order: confirming commits with
		// the saga state, so a saga compensating it never confirmed the
		// order. The order is cancelled once, by the compensation of
		// create_order, after the stock and the money are back.
		r.skipped = true
		return nil, nil
	default:
		return transition(ctx, tx, o, order.StatusCancelled, inst.Data.FailureReason, outbox.TypeOrderCancelled, r, now)
	}
}

// transition moves o to status and stores it. A terminal order is left as
// it is: for a compensation that is "skipped", for a forward step an error.
func transition(ctx context.Context, tx store.Tx, o order.Order, to order.Status, reason, eventType string, r *stepRun, now time.Time) (*orderChange, error) {
	prev := o.Version
	if !o.Transition(to, reason, now) {
		if r.dir == saga.Compensate {
			r.skipped = true
		} else {
			r.err = apperr.New(apperr.Invalid, "order is %s; cannot move it to %s", o.Status, to)
		}
		return nil, nil
	}
	if err := tx.UpdateOrder(ctx, o, prev); err != nil {
		return nil, err
	}
	return &orderChange{order: o, eventType: eventType}, nil
}
