package chaos

import (
	"reflect"
	"strings"

	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// stockConserved: stock is never negative and every unit is accounted for:
// initial = available + reserved + sold. Each completed saga settled one
// reservation matching its order, compensated sagas hold none, and what is
// reserved is exactly what the live reservations hold. After the drain no
// order is in flight, so reserved is only what failed sagas (dead-lettered,
// awaiting an operator) still hold, and sold is what CONFIRMED orders
// bought.
func (c *checker) stockConserved() {
	held, bought, failedHeld := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, id := range c.s.resIDs {
		r := c.s.res[id]
		inst, ok := c.s.sagas[id]
		if r.Status != inventory.Reserved {
			continue
		}
		for _, l := range r.Lines {
			held[l.SKU] += l.Quantity
			if c.failedSaga[id] {
				failedHeld[l.SKU] += l.Quantity
			}
		}
		switch {
		case !ok:
			c.fail("reservation %s holds stock but belongs to no saga", id)
		case inst.State == saga.StateCompensated:
			c.fail("saga %s was compensated but its reservation still holds stock", id)
		}
	}
	for _, id := range c.s.sagaIDs {
		inst := c.s.sagas[id]
		if inst.State != saga.StateCompleted {
			continue
		}
		r, ok := c.s.res[id]
		if !ok || r.Status != inventory.Settled {
			c.fail("saga %s completed without settling its reservation (%v)", id, r.Status)
			continue
		}
		if got, want := linesOf(r.Lines), itemsOf(c.s.orders[inst.Data.OrderID].Items); !reflect.DeepEqual(got, want) {
			c.fail("saga %s reserved %v for an order of %v", id, got, want)
		}
	}
	for _, id := range c.s.orderIDs {
		if o := c.s.orders[id]; o.Status == order.StatusConfirmed {
			for sku, q := range itemsOf(o.Items) {
				bought[sku] += q
			}
		}
	}
	seen := map[string]bool{}
	for _, st := range c.s.stock {
		seen[st.SKU] = true
		init, known := c.w.initial[st.SKU]
		switch {
		case !known:
			c.fail("stock row %s was never seeded", st.SKU)
		case st.Available < 0 || st.Reserved < 0 || st.Sold < 0:
			c.fail("stock %s is negative: available %d, reserved %d, sold %d", st.SKU, st.Available, st.Reserved, st.Sold)
		case st.Available+st.Reserved+st.Sold != init:
			c.fail("stock %s is not conserved: available %d + reserved %d + sold %d != initial %d", st.SKU, st.Available, st.Reserved, st.Sold, init)
		}
		if st.Reserved != held[st.SKU] {
			c.fail("stock %s: %d reserved, but reservations hold %d", st.SKU, st.Reserved, held[st.SKU])
		}
		if st.Sold != bought[st.SKU] {
			c.fail("stock %s: %d sold, but CONFIRMED orders bought %d", st.SKU, st.Sold, bought[st.SKU])
		}
		if st.Reserved != failedHeld[st.SKU] {
			c.fail("stock %s: %d reserved after the drain, but only failed sagas may still hold stock (%d)", st.SKU, st.Reserved, failedHeld[st.SKU])
		}
	}
	for _, sku := range sortedKeys(c.w.initial) {
		if !seen[sku] {
			c.fail("stock row %s disappeared", sku)
		}
	}
}

// moneyBalances: per saga, the ledger holds one charge and at most one
// refund, a completed saga's charge equals its order's total and a
// compensated saga's net is zero; the provider's real effects agree with
// the ledger; and in total, charged − refunded equals the total of the
// CONFIRMED orders (plus what failed sagas left charged).
func (c *checker) moneyBalances() {
	var confirmed, failedNet, ledgerC, ledgerR int64
	for _, id := range c.s.payIDs {
		p := c.s.pays[id]
		if _, ok := c.s.sagas[p.SagaID]; !ok || id != payment.EntryID(p.SagaID, p.Kind) {
			c.fail("ledger entry %s belongs to no saga", id)
		}
		if p.Status == payment.Succeeded && p.Kind == payment.Charge {
			ledgerC += p.AmountMinor
		}
		if p.Status == payment.Succeeded && p.Kind == payment.Refund {
			ledgerR += p.AmountMinor
		}
	}
	if ledgerC != c.s.charged || ledgerR != c.s.refunded {
		c.fail("ledger totals %d/%d disagree with its entries %d/%d", c.s.charged, c.s.refunded, ledgerC, ledgerR)
	}
	fx := c.w.fx
	fx.mu.Lock()
	defer fx.mu.Unlock()
	var fxC, fxR, fxFailedNet int64
	for _, id := range c.s.sagaIDs {
		inst := c.s.sagas[id]
		o := c.s.orders[inst.Data.OrderID]
		if o.Status == order.StatusConfirmed {
			confirmed += o.TotalMinor
		}
		net := c.ledgerNet(id)
		chKey, rfKey := payment.EntryID(id, payment.Charge), payment.EntryID(id, payment.Refund)
		pNet := fx.charges[chKey].amount - fx.refunds[rfKey].amount
		switch inst.State {
		case saga.StateCompleted:
			if net != inst.Data.TotalMinor || c.succeeded(rfKey) {
				c.fail("saga %s completed with %d net charged in the ledger for a total of %d", id, net, inst.Data.TotalMinor)
			}
		case saga.StateCompensated:
			if net != 0 {
				c.fail("saga %s was compensated but the ledger keeps %d charged", id, net)
			}
		case saga.StateFailed:
			failedNet += net
			fxFailedNet += pNet
			continue // an operator settles it: the ledger may lag the provider
		}
		if (fx.charges[chKey].amount != 0) != c.succeeded(chKey) || fx.charges[chKey].amount != c.amount(chKey) {
			c.fail("saga %s: the provider charged %d, the ledger says %d", id, fx.charges[chKey].amount, c.amount(chKey))
		}
		if (fx.refunds[rfKey].amount != 0) != c.succeeded(rfKey) || fx.refunds[rfKey].amount != c.amount(rfKey) {
			c.fail("saga %s: the provider refunded %d, the ledger says %d", id, fx.refunds[rfKey].amount, c.amount(rfKey))
		}
	}
	for _, m := range []map[string]effect{fx.charges, fx.refunds} {
		for _, key := range sortedKeys(m) {
			sagaID, _, _ := strings.Cut(key, ":")
			if _, ok := c.s.sagas[sagaID]; !ok {
				c.fail("the provider took effect under key %s, which belongs to no saga", key)
			}
			if m[key].amount <= 0 {
				c.fail("the provider recorded a non-positive amount under key %s", key)
			}
		}
	}
	for _, key := range fx.conflicts {
		c.fail("the provider charged twice under key %s", key)
	}
	for _, e := range fx.charges {
		fxC += e.amount
	}
	for _, e := range fx.refunds {
		fxR += e.amount
	}
	if cnt := c.w.sim.Counters(); cnt.Charges != len(fx.charges) || cnt.ChargedMinor != fxC ||
		cnt.Refunds != len(fx.refunds) || cnt.RefundedMinor != fxR {
		c.fail("the provider's counters %+v disagree with the effects observed (%d charges of %d, %d refunds of %d)",
			cnt, len(fx.charges), fxC, len(fx.refunds), fxR)
	}
	if c.s.charged-c.s.refunded != confirmed+failedNet {
		c.fail("ledger: charged %d − refunded %d != %d, the total of CONFIRMED orders (+%d left by failed sagas)",
			c.s.charged, c.s.refunded, confirmed, failedNet)
	}
	if fxC-fxR != confirmed+fxFailedNet {
		c.fail("provider: charged %d − refunded %d != %d, the total of CONFIRMED orders (+%d left by failed sagas)",
			fxC, fxR, confirmed, fxFailedNet)
	}
}

func (c *checker) succeeded(id string) bool {
	p, ok := c.s.pays[id]
	return ok && p.Status == payment.Succeeded
}

func (c *checker) amount(id string) int64 {
	if c.succeeded(id) {
		return c.s.pays[id].AmountMinor
	}
	return 0
}

// ledgerNet is what the ledger keeps charged for a saga.
func (c *checker) ledgerNet(sagaID string) int64 {
	return c.amount(payment.EntryID(sagaID, payment.Charge)) - c.amount(payment.EntryID(sagaID, payment.Refund))
}

func linesOf(ls []inventory.Line) map[string]int64 {
	m := map[string]int64{}
	for _, l := range ls {
		m[l.SKU] += l.Quantity
	}
	return m
}

func itemsOf(items []order.Item) map[string]int64 {
	m := map[string]int64{}
	for _, it := range items {
		m[it.SKU] += it.Quantity
	}
	return m
}
