package stock

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
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

// planned is one row a reservation will write, as read: a sub-row (isSub)
// or the stock row; take units move from its available to its reserved.
// prev is the version it was read at (0: a sub-row that does not exist).
type planned struct {
	stock inventory.Stock
	shard inventory.Shard
	isSub bool
	take  int64
	prev  int64
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

// planLine decides where a reservation of q units of st.SKU comes from:
// the saga's own sub-row when it has them (one point read), otherwise the
// sub-rows in ring order from it (one read of them all). ok is false when
// the SKU has fewer than q units available (nothing is planned then).
func planLine(ctx context.Context, tx store.Tx, sagaID string, st inventory.Stock, q int64) ([]planned, bool, error) {
	n := active(st)
	if n == 0 {
		if st.Available < q {
			return nil, false, nil
		}
		return []planned{{stock: st, take: q, prev: st.Version}}, true, nil
	}
	start := preferredShard(sagaID, n)
	first, _, err := getShard(ctx, tx, st.SKU, start)
	if err != nil {
		return nil, false, err
	}
	if first.Available >= q {
		return []planned{{shard: first, isSub: true, take: q, prev: first.Version}}, true, nil
	}
	// Short: read every sub-row at once (one range read rather than up to
	// n point reads) and take what is still needed in ring order.
	subs, err := tx.ListStockShards(ctx, st.SKU)
	if err != nil {
		return nil, false, err
	}
	byShard := make(map[int64]inventory.Shard, len(subs))
	for _, sh := range subs {
		byShard[sh.Shard] = sh
	}
	var out []planned
	left := q
	for i := int64(0); i < n && left > 0; i++ {
		sh, ok := byShard[(start+i)%n]
		take := min(sh.Available, left)
		if !ok || take <= 0 {
			continue
		}
		left -= take
		out = append(out, planned{shard: sh, isSub: true, take: take, prev: sh.Version})
	}
	return out, left == 0, nil
}

// getShard reads one sub-row; a missing one is an empty sub-row at version
// 0 (found false), which putShard inserts.
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
			home, _, err := getShard(ctx, tx, t.SKU, t.Shard%n) // a missing one is inserted (version 0)
			if err != nil {
				return err
			}
			home.Available += t.Quantity
			if err := putShard(ctx, tx, home, home.Version, now); err != nil {
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
