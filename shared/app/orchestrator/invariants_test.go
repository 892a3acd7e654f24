package orchestrator_test

import (
	"context"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// checkInvariants asserts the delivery guarantees over the whole world.
func (e *env) checkInvariants() {
	e.t.Helper()
	want := map[saga.State]order.Status{saga.StateCompleted: order.StatusConfirmed,
		saga.StateCompensated: order.StatusCancelled, saga.StateFailed: order.StatusFailed}
	var confirmed int64
	reservedByConfirmed := map[string]int64{}
	for _, id := range e.sagas {
		s := e.saga(id)
		o := e.order(e.orderOf[id])
		if !s.State.Finished() {
			e.t.Errorf("saga %s left %s", id, s.State)
			continue
		}
		if o.Status != want[s.State] {
			e.t.Errorf("saga %s is %s but order %s is %s", id, s.State, o.ID, o.Status)
		}
		if s.State == saga.StateCompleted {
			confirmed += o.TotalMinor
			for _, it := range o.Items {
				reservedByConfirmed[it.SKU] += it.Quantity
			}
		}
	}
	var all []inventory.Stock
	e.view(func(ctx context.Context, tx store.Tx) (err error) { all, err = tx.ListStock(ctx); return err })
	for _, st := range all {
		if st.Available < 0 || st.Reserved < 0 || st.Sold < 0 {
			e.t.Errorf("negative stock: %+v", st)
		}
		if st.Available+st.Reserved+st.Sold != e.initial[st.SKU] {
			e.t.Errorf("%s: available %d + reserved %d + sold %d != initial %d", st.SKU, st.Available, st.Reserved, st.Sold, e.initial[st.SKU])
		}
		if st.Sold != reservedByConfirmed[st.SKU] || st.Reserved != 0 {
			e.t.Errorf("%s: sold %d and reserved %d, but confirmed orders bought %d (and none are in flight)",
				st.SKU, st.Sold, st.Reserved, reservedByConfirmed[st.SKU])
		}
	}
	charged, refunded := e.totals()
	if charged-refunded != confirmed {
		e.t.Errorf("ledger: charged %d - refunded %d != confirmed total %d", charged, refunded, confirmed)
	}
	c := e.sim.Counters()
	if c.ChargedMinor-c.RefundedMinor != confirmed {
		e.t.Errorf("provider: charged %d - refunded %d != confirmed total %d (%+v)", c.ChargedMinor, c.RefundedMinor, confirmed, c)
	}
}

// faultAt returns an injected fault (orchestrator.Faults.Fail) failing the named step with err, n times (n < 0: always).
func faultAt(step string, dir saga.Direction, err error, n int) func(string, saga.Direction) error {
	return func(s string, d saga.Direction) error {
		if s != step || d != dir || n == 0 {
			return nil
		}
		n--
		return err
	}
}

var (
	errTransient = apperr.New(apperr.Transient, "injected: unavailable")
	errRejected  = apperr.New(apperr.Rejected, "injected: refused")
)

func item(sku string, qty, price int64) order.Item {
	return order.Item{SKU: sku, Quantity: qty, UnitPriceMinor: price}
}

// lossyCharges loses the answer of every successful charge whose key lose
// selects: the provider took the money, the caller hears "unavailable".
type lossyCharges struct {
	*paymentsim.Sim
	lose func(key string) bool
}

var _ payments.Provider = (*lossyCharges)(nil)

func (l *lossyCharges) Charge(ctx context.Context, key string, amount int64, currency string) (string, error) {
	ref, err := l.Sim.Charge(ctx, key, amount, currency)
	if err == nil && l.lose(key) {
		return "", apperr.New(apperr.Transient, "injected: charge answer lost")
	}
	return ref, err
}
