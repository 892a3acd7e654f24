package stock

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/inventory"
	"ordersaga/shared/store"
)

// Sharded stock. A SKU whose Stock.Shards is 2 or more keeps its available
// units on sub-rows 0..Shards-1 (inventory.Shard) instead of its stock row.
// A reservation reads the stock row (to learn Shards; nothing but an
// operator writes it) and writes the sub-row its saga id hashes to, so
// concurrent orders of one SKU write different rows; only when that sub-row
// is short does it read the next ones, in ring order, and take what it
// still needs from them. The reservation records every sub-row it took
// from (Reservation.Takes), so its release or settlement goes back to
// exactly those rows, once, whatever the SKU's Shards is by then.
//
// The SKU's stock is its stock row plus all its sub-rows. Only the
// operator's actions (SetShards, Rebalance, SetAvailable) move available
// units between rows, in one transaction that checks the total before and
// after, so no unit is created or lost.

// planned is one row a reservation will write: a sub-row (shard >= 0) or
// the stock row (shard < 0), with the version it was read at.
type planned struct {
	stock inventory.Stock
	shard inventory.Shard
	isSub bool
	take  int64
	prev  int64
	found bool
}

// preferredShard is the sub-row, of n, that a saga's reservations start at.
func preferredShard(sagaID string, n int64) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(sagaID))
	return int64(h.Sum32() % uint32(n))
}

// active is the number of sub-rows new reservations of st spread over (0:
// the SKU is not sharded; its units are on the stock row).
func active(st inventory.Stock) int64 {
	if st.Shards >= 2 {
		return st.Shards
	}
	return 0
}

// planLine decides where a reservation of q units of st.SKU comes from,
// reading only what it needs. ok is false when the SKU has fewer than q
// units available (nothing is planned then).
func planLine(ctx context.Context, tx store.Tx, sagaID string, st inventory.Stock, q int64) ([]planned, bool, error) {
	n := active(st)
	if n == 0 {
		if st.Available < q {
			return nil, false, nil
		}
		return []planned{{stock: st, take: q, prev: st.Version, found: true}}, true, nil
	}
	var out []planned
	left := q
	start := preferredShard(sagaID, n)
	for i := int64(0); i < n && left > 0; i++ {
		sh, found, err := getShard(ctx, tx, st.SKU, (start+i)%n)
		if err != nil {
			return nil, false, err
		}
		take := min(sh.Available, left)
		if take <= 0 {
			continue
		}
		left -= take
		out = append(out, planned{shard: sh, isSub: true, take: take, prev: sh.Version, found: found})
	}
	return out, left == 0, nil
}

// getShard reads one sub-row; a missing one is an empty sub-row (found false).
func getShard(ctx context.Context, tx store.Tx, sku string, shard int64) (inventory.Shard, bool, error) {
	sh, err := tx.GetStockShard(ctx, sku, shard)
	if apperr.Is(err, apperr.NotFound) {
		return inventory.Shard{SKU: sku, Shard: shard}, false, nil
	}
	return sh, err == nil, err
}

// putShard writes sh, read at version prev (0: it did not exist).
func putShard(ctx context.Context, tx store.Tx, sh inventory.Shard, prev int64, now time.Time) error {
	sh.UpdatedAt, sh.Version = now, prev+1
	return tx.PutStockShard(ctx, sh, prev)
}

// applyReserve moves the planned units from available to reserved and
// returns the takes to record (sub-rows only).
func applyReserve(ctx context.Context, tx store.Tx, plan []planned, now time.Time) ([]inventory.Take, error) {
	var takes []inventory.Take
	for _, p := range plan {
		if !p.isSub {
			st := p.stock
			st.Available -= p.take
			st.Reserved += p.take
			st.UpdatedAt, st.Version = now, p.prev+1
			if err := tx.PutStock(ctx, st, p.prev); err != nil {
				return nil, err
			}
			continue
		}
		sh := p.shard
		sh.Available -= p.take
		sh.Reserved += p.take
		if err := putShard(ctx, tx, sh, p.prev, now); err != nil {
			return nil, err
		}
		takes = append(takes, inventory.Take{SKU: sh.SKU, Shard: sh.Shard, Quantity: p.take})
	}
	return takes, nil
}

// takesOf returns r's takes of sku.
func takesOf(r inventory.Reservation, sku string) []inventory.Take {
	var out []inventory.Take
	for _, t := range r.Takes {
		if t.SKU == sku {
			out = append(out, t)
		}
	}
	return out
}

// lineSplit returns how many of line l's units are on sub-rows (the rest
// are on the stock row). A reservation whose takes exceed its line is
// refused: it would give back units it never took.
func lineSplit(r inventory.Reservation, l inventory.Line) ([]inventory.Take, int64, error) {
	takes := takesOf(r, l.SKU)
	var sub int64
	for _, t := range takes {
		if t.Quantity < 1 {
			return nil, 0, apperr.New(apperr.Internal, "stock: reservation %s takes %d of %s sub-row %d", r.ID, t.Quantity, l.SKU, t.Shard)
		}
		sub += t.Quantity
	}
	if sub > l.Quantity {
		return nil, 0, apperr.New(apperr.Internal, "stock: reservation %s took %d of %s from sub-rows, more than its %d",
			r.ID, sub, l.SKU, l.Quantity)
	}
	return takes, l.Quantity - sub, nil
}

// releaseTakes gives back the units r took from sub-rows of sku: reserved
// leaves the sub-row it was taken from; the units become available on that
// sub-row while the SKU still spreads over it, otherwise on the row new
// reservations use now (sub-row shard % Shards, or the stock row).
func releaseTakes(ctx context.Context, tx store.Tx, r inventory.Reservation, takes []inventory.Take, now time.Time) error {
	if len(takes) == 0 {
		return nil
	}
	st, err := tx.GetStock(ctx, takes[0].SKU)
	if err != nil {
		return fmt.Errorf("stock: release %s: %w", takes[0].SKU, err)
	}
	n := active(st)
	toStockRow := int64(0)
	for _, t := range takes {
		sh, found, err := getShard(ctx, tx, t.SKU, t.Shard)
		if err != nil {
			return err
		}
		if !found || sh.Reserved < t.Quantity {
			return apperr.New(apperr.Internal, "stock: %s sub-row %d has %d reserved, fewer than the %d reservation %s took",
				t.SKU, t.Shard, sh.Reserved, t.Quantity, r.ID)
		}
		prev := sh.Version
		sh.Reserved -= t.Quantity
		switch {
		case t.Shard < n:
			sh.Available += t.Quantity
		case n == 0:
			toStockRow += t.Quantity
		default:
			if err := putShard(ctx, tx, sh, prev, now); err != nil {
				return err
			}
			home, hfound, err := getShard(ctx, tx, t.SKU, t.Shard%n)
			if err != nil {
				return err
			}
			hprev := home.Version
			if !hfound {
				hprev = 0
			}
			home.Available += t.Quantity
			if err := putShard(ctx, tx, home, hprev, now); err != nil {
				return err
			}
			continue
		}
		if err := putShard(ctx, tx, sh, prev, now); err != nil {
			return err
		}
	}
	if toStockRow > 0 {
		prev := st.Version
		st.Available += toStockRow
		st.UpdatedAt, st.Version = now, prev+1
		return tx.PutStock(ctx, st, prev)
	}
	return nil
}

// settleTakes moves the units r took from sub-rows from reserved to sold.
func settleTakes(ctx context.Context, tx store.Tx, r inventory.Reservation, takes []inventory.Take, now time.Time) error {
	for _, t := range takes {
		sh, found, err := getShard(ctx, tx, t.SKU, t.Shard)
		if err != nil {
			return err
		}
		if !found || sh.Reserved < t.Quantity {
			return apperr.New(apperr.Internal, "stock: %s sub-row %d has %d reserved, fewer than the %d reservation %s took",
				t.SKU, t.Shard, sh.Reserved, t.Quantity, r.ID)
		}
		prev := sh.Version
		sh.Reserved -= t.Quantity
		sh.Sold += t.Quantity
		if err := putShard(ctx, tx, sh, prev, now); err != nil {
			return err
		}
	}
	return nil
}

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
