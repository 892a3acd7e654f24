package stock

import (
	"context"
	"sort"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// ViewIn returns the operator's view of one SKU inside tx: its stock row
// plus every sub-row it has. NotFound if the SKU has no stock row.
func ViewIn(ctx context.Context, tx store.Tx, sku string) (inventory.Stock, error) {
	st, err := tx.GetStock(ctx, sku)
	if err != nil {
		return st, err
	}
	return withShards(ctx, tx, st)
}

// ListIn returns the operator's view of every SKU inside tx, ordered by SKU.
func ListIn(ctx context.Context, tx store.Tx) ([]inventory.Stock, error) {
	list, err := tx.ListStock(ctx)
	if err != nil {
		return nil, err
	}
	for i, st := range list {
		if list[i], err = withShards(ctx, tx, st); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// withShards adds st's sub-rows to it. A SKU that was never sharded
// (Shards 0) has none and costs no read.
func withShards(ctx context.Context, tx store.Tx, st inventory.Stock) (inventory.Stock, error) {
	if st.Shards == 0 {
		return st, nil
	}
	subs, err := tx.ListStockShards(ctx, st.SKU)
	if err != nil {
		return st, err
	}
	for _, sh := range subs {
		st.Available += sh.Available
		st.Reserved += sh.Reserved
		st.Sold += sh.Sold
		if sh.UpdatedAt.After(st.UpdatedAt) {
			st.UpdatedAt = sh.UpdatedAt
		}
	}
	return st, nil
}

// spread sets the SKU's available units to total, spread evenly over the
// sub-rows 0..n-1 when n >= 2 (sub-row i gets total/n, one more for the
// first total%n) and all on the stock row otherwise; no other row keeps
// available units. st is the stock row as read (prev its version, 0 when
// it does not exist); it is written with Shards = shards. Reserved and
// sold units stay where they are: reservations name their rows. It
// returns the stock row as written and how many units changed rows.
func spread(ctx context.Context, tx store.Tx, st inventory.Stock, prev, shards, total int64, now time.Time) (inventory.Stock, int64, error) {
	subs, err := tx.ListStockShards(ctx, st.SKU)
	if err != nil {
		return st, 0, err
	}
	n := int64(0)
	if shards >= 2 {
		n = shards
	}
	want := func(i int64) int64 {
		if i >= n {
			return 0
		}
		w := total / n
		if i < total%n {
			w++
		}
		return w
	}
	byShard := make(map[int64]inventory.Shard, len(subs))
	for _, sh := range subs {
		byShard[sh.Shard] = sh
	}
	idx := make([]int64, 0, len(subs)+int(n))
	for i := range n {
		if _, ok := byShard[i]; !ok {
			byShard[i] = inventory.Shard{SKU: st.SKU, Shard: i}
		}
	}
	for i := range byShard {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	var moved, after int64
	for _, i := range idx {
		sh := byShard[i]
		w := want(i)
		after += w
		if sh.Available == w && sh.Version > 0 {
			continue
		}
		moved += max(w-sh.Available, 0)
		p := sh.Version
		sh.Available = w
		if err := putShard(ctx, tx, sh, p, now); err != nil {
			return st, 0, err
		}
	}
	onRow := total
	if n > 0 {
		onRow = 0
	}
	moved += max(onRow-st.Available, 0)
	after += onRow
	if after != total {
		return st, 0, apperr.New(apperr.Internal, "stock: spreading %d units of %s over %d sub-rows gave %d", total, st.SKU, n, after)
	}
	st.Available, st.Shards = onRow, shards
	st.UpdatedAt, st.Version = now, prev+1
	return st, moved, tx.PutStock(ctx, st, prev)
}
