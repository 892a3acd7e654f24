package chaos

import (
	"context"
	"fmt"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// Sharded stock (Options.Sharded): sku-a is spread over 16 sub-rows and
// sku-b over 4 before the first order; during the orders an operator
// rebalances them and changes their number of sub-rows (sku-b back to 1,
// unsharded, now and then) while reservations, releases and settlements
// run, through the same fault-injecting store.

// shardPlan is each sharded SKU's sub-rows at the start.
var shardPlan = []struct {
	sku    string
	shards int64
}{{"sku-a", 16}, {"sku-b", 4}}

// shardStock spreads the sharded SKUs over their sub-rows.
func (w *world) shardStock(ctx context.Context) error {
	for _, p := range shardPlan {
		if _, err := w.app.Commands.Stock.SetShards(ctx, "chaos-operator", p.sku, p.shards); err != nil {
			return fmt.Errorf("chaos: shard %s: %w", p.sku, err)
		}
	}
	return nil
}

// operate is one round of the operator: rebalance sku-a every time, sku-b
// every third; every fourth round, the first included, set sku-a to 8..16
// sub-rows, every fifth sku-b to 1..4. The choices come from a counter, not
// the seed's streams, so concurrent runs draw nothing from them. A transient
// failure (an injected fault, a lost race) is retried a few times, as an
// operator would; any other error is a violation.
func (w *world) operate(ctx context.Context) {
	if !w.opts.Sharded {
		return
	}
	n := w.operations
	w.operations++
	a := w.app.Commands.Stock
	try := func(what string, op func() error) {
		err := op()
		for i := 0; i < 4 && apperr.Is(err, apperr.Transient); i++ {
			err = op()
		}
		if err != nil && !apperr.Is(err, apperr.Transient) && len(w.sampled) < maxSampled {
			w.sampled = append(w.sampled, fmt.Sprintf("operator %s: %v", what, err))
		}
	}
	try("rebalance sku-a", func() error { _, _, err := a.Rebalance(ctx, "chaos-operator", "sku-a"); return err })
	if n%3 == 2 {
		try("rebalance sku-b", func() error { _, _, err := a.Rebalance(ctx, "chaos-operator", "sku-b"); return err })
	}
	if n%4 == 0 {
		try("shard sku-a", func() error { _, err := a.SetShards(ctx, "chaos-operator", "sku-a", 8+(n/4)%9); return err })
	}
	if n%5 == 4 {
		try("shard sku-b", func() error { _, err := a.SetShards(ctx, "chaos-operator", "sku-b", 1+(n/5)%4); return err })
	}
}

// readShards reads every SKU's stock row and sub-rows as stored.
func readShards(ctx context.Context, tx store.Tx) ([]inventory.Stock, map[string][]inventory.Shard, error) {
	rows, err := tx.ListStock(ctx)
	if err != nil {
		return nil, nil, err
	}
	subs := map[string][]inventory.Shard{}
	for _, r := range rows {
		if subs[r.SKU], err = tx.ListStockShards(ctx, r.SKU); err != nil {
			return nil, nil, err
		}
	}
	return rows, subs, nil
}

// sampleShards checks, at this instant, that no stock row or sub-row is
// negative.
func (w *world) sampleShards(ctx context.Context, at string) {
	var (
		rows []inventory.Stock
		subs map[string][]inventory.Shard
	)
	err := w.sqlite.View(ctx, func(ctx context.Context, tx store.Tx) (err error) {
		rows, subs, err = readShards(ctx, tx)
		return err
	})
	if err != nil {
		return
	}
	for _, r := range rows {
		if r.Available < 0 || r.Reserved < 0 || r.Sold < 0 {
			w.sampled = append(w.sampled, fmt.Sprintf("stock row %s negative at +%s: %+v", r.SKU, at, r))
		}
		for _, sh := range subs[r.SKU] {
			if sh.Available < 0 || sh.Reserved < 0 || sh.Sold < 0 {
				w.sampled = append(w.sampled, fmt.Sprintf("stock %s sub-row %d negative at +%s: %+v", r.SKU, sh.Shard, at, sh))
			}
		}
	}
}

// rowsHoldTheirTakes: every row holds exactly what the live reservations
// took from it: a sub-row's reserved is the sum of the takes naming it, a
// stock row's the rest of the reserved lines; so every release and
// settlement went back to the row its units came from.
func (c *checker) rowsHoldTheirTakes() {
	wantRow, wantSub := map[string]int64{}, map[string]map[int64]int64{}
	for _, id := range c.s.resIDs {
		r := c.s.res[id]
		if r.Status != inventory.Reserved {
			continue
		}
		for _, l := range r.Lines {
			wantRow[l.SKU] += l.Quantity
		}
		for _, t := range r.Takes {
			wantRow[t.SKU] -= t.Quantity
			if wantSub[t.SKU] == nil {
				wantSub[t.SKU] = map[int64]int64{}
			}
			wantSub[t.SKU][t.Shard] += t.Quantity
		}
	}
	for _, row := range c.s.rows {
		if row.Reserved != wantRow[row.SKU] {
			c.fail("stock row %s: %d reserved, but the reservations not taken from sub-rows hold %d", row.SKU, row.Reserved, wantRow[row.SKU])
		}
		seen := map[int64]bool{}
		for _, sh := range c.s.subs[row.SKU] {
			seen[sh.Shard] = true
			if sh.Available < 0 || sh.Reserved < 0 || sh.Sold < 0 {
				c.fail("stock %s sub-row %d is negative: %+v", row.SKU, sh.Shard, sh)
			}
			if sh.Reserved != wantSub[row.SKU][sh.Shard] {
				c.fail("stock %s sub-row %d: %d reserved, but reservations took %d from it", row.SKU, sh.Shard, sh.Reserved, wantSub[row.SKU][sh.Shard])
			}
		}
		for shard := range wantSub[row.SKU] {
			if !seen[shard] {
				c.fail("reservations took units of %s from sub-row %d, which does not exist", row.SKU, shard)
			}
		}
	}
}
