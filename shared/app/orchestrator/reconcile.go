package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// finalStatus maps a finished saga state to the order status it implies.
var finalStatus = map[saga.State]struct {
	status    order.Status
	eventType string
}{
	saga.StateCompleted:   {order.StatusConfirmed, outbox.TypeOrderConfirmed},
	saga.StateCompensated: {order.StatusCancelled, outbox.TypeOrderCancelled},
	saga.StateFailed:      {order.StatusFailed, outbox.TypeOrderFailed},
}

// listDiverged lists the finished sagas whose orders disagree with them;
// Run repairs those orders (repair). The saga is the source of truth: its final state
// was saved with its effects (stock, money), so the order is set to match
// (even from another terminal status, which is logged loudly) and the
// matching order event is written for downstream consumers.
func (r *Recovery) listDiverged(ctx context.Context, tx store.Tx, rep *Report) ([]saga.Instance, error) {
	var diverged []saga.Instance
	for _, st := range []saga.State{saga.StateCompleted, saga.StateCompensated, saga.StateFailed} {
		list, err := tx.ListSagasByState(ctx, st, time.Time{}, r.c.ReconcileBatch)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			rep.ReconcileChecked++
			o, err := tx.GetOrder(ctx, s.Data.OrderID)
			if apperr.Is(err, apperr.NotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if o.Status != finalStatus[st].status {
				diverged = append(diverged, s)
			}
		}
	}
	return diverged, nil
}

// repair sets one order's status to what its finished saga implies.
func (r *Recovery) repair(ctx context.Context, sagaID string) ([]outbox.Event, bool, error) {
	eventID := r.c.NewID()
	var ev outbox.Event
	var dispatch []outbox.Event
	var ok bool
	var from, to order.Status
	err := r.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		ok = false
		now := r.now()
		s, err := tx.GetSaga(ctx, sagaID)
		if err != nil {
			return err
		}
		want, finished := finalStatus[s.State]
		if !finished {
			return nil
		}
		o, err := tx.GetOrder(ctx, s.Data.OrderID)
		if err != nil || o.Status == want.status {
			return err
		}
		from, to = o.Status, want.status
		prev := o.Version
		o.Status, o.UpdatedAt, o.Version = want.status, now, prev+1
		o.StatusReason = s.Data.FailureReason
		if want.status == order.StatusConfirmed {
			o.StatusReason = ""
		}
		if err := tx.UpdateOrder(ctx, o, prev); err != nil {
			return err
		}
		ev, err = newOrderEvent(eventID, r.c.Shards, want.eventType, o, chain(s, nil), now, r.c.Owner, r.c.DispatchLease)
		if err != nil {
			return err
		}
		if dispatch, err = r.out.Write(ctx, tx, []outbox.Event{ev}, ""); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if apperr.Is(err, apperr.Conflict) {
		return nil, false, nil // changed meanwhile; the next run looks again
	}
	if err != nil {
		return nil, false, err // not committed: nothing to dispatch
	}
	if ok {
		lvl := r.c.Log.Warn
		if from.Terminal() {
			lvl = r.c.Log.Error
		}
		lvl("order reconciled with its finished saga", "saga_id", sagaID, "order_id", ev.AggregateID,
			"from", from, "to", to)
	}
	return dispatch, ok, nil
}
