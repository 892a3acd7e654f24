package orchestrator_test

import (
	"context"
	"testing"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// TestChainedStepsNeverDecideOnAChangedRow: a chained confirm_order updates
// the order and the reservation as earlier steps of the same message left
// them, without reading them again. If either row changed in between (here
// after process_payment's effect, before the save it folds confirm_order
// into), the update's version check fails that transaction: nothing of
// either step commits, the message is acknowledged, and the saga resumes
// from process_payment's command row (published by the relay; the charge
// is idempotent), which reads everything afresh. The
// order is confirmed and its stock sold exactly once.
func TestChainedStepsNeverDecideOnAChangedRow(t *testing.T) {
	ctx := context.Background()
	bump := map[string]func(ctx context.Context, tx store.Tx, orderID, sagaID string) error{
		"order": func(ctx context.Context, tx store.Tx, orderID, _ string) error {
			o, err := tx.GetOrder(ctx, orderID)
			if err != nil {
				return err
			}
			prev := o.Version
			o.Version = prev + 1
			return tx.UpdateOrder(ctx, o, prev)
		},
		"reservation": func(ctx context.Context, tx store.Tx, _, sagaID string) error {
			r, err := tx.GetReservation(ctx, sagaID)
			if err != nil {
				return err
			}
			prev := r.Version
			r.Version = prev + 1
			return tx.UpdateReservation(ctx, r, prev)
		},
	}
	for name, change := range bump {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
			orderID, sagaID := e.place(item("sku-1", 1, 10))
			e.afterStep = func(step string, _ saga.Direction) error {
				if step != saga.StepProcessPayment {
					return nil
				}
				return e.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
					return change(ctx, tx, orderID, sagaID)
				})
			}
			first := e.queue[0].msg
			e.queue = nil
			res, err := e.adv.Handle(ctx, first)
			if err != nil {
				t.Fatalf("handle: %v", err)
			}
			if s := e.saga(sagaID); s.State != saga.StateRunning || s.Step != 2 || s.LeaseOwner != "" || len(e.trail(sagaID)) != 2 {
				t.Fatalf("confirm_order (folded into process_payment's save) must not commit on a changed %s: %+v (result %+v, log %v)", name, s, res, e.trail(sagaID))
			}
			if st := e.stockOf("sku-1"); st.Reserved != 1 || st.Sold != 0 {
				t.Fatalf("stock %+v: nothing sold yet", st)
			}
			e.afterStep = nil
			if n := e.relay(); n != 1 {
				t.Fatalf("relay published %d rows, want process_payment's command", n)
			}
			e.deliver(chaos{})
			if s := e.saga(sagaID); s.State != saga.StateCompleted {
				t.Fatalf("saga %+v, want completed", s)
			}
			if o := e.order(orderID); o.Status != "CONFIRMED" {
				t.Errorf("order %s, want CONFIRMED", o.Status)
			}
			if st := e.stockOf("sku-1"); st.Reserved != 0 || st.Sold != 1 || st.Available != 4 {
				t.Errorf("stock %+v: one unit sold once", st)
			}
			confirms := 0
			for _, l := range e.trail(sagaID) {
				if l == saga.StepConfirmOrder+"/forward/succeeded" {
					confirms++
				}
			}
			if confirms != 1 {
				t.Errorf("log %v: confirm_order must succeed once", e.trail(sagaID))
			}
		})
	}
}
