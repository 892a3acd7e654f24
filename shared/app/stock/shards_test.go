package stock_test

import (
	"context"
	"fmt"
	"testing"

	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// subRows reads a SKU's stock row and its sub-rows as stored.
func subRows(t *testing.T, st store.Store, sku string) (inventory.Stock, map[int64]inventory.Shard) {
	t.Helper()
	var (
		row  inventory.Stock
		subs []inventory.Shard
	)
	err := st.View(context.Background(), func(ctx context.Context, tx store.Tx) (err error) {
		if row, err = tx.GetStock(ctx, sku); err != nil {
			return err
		}
		subs, err = tx.ListStockShards(ctx, sku)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]inventory.Shard{}
	for _, s := range subs {
		out[s.Shard] = s
	}
	return row, out
}

// reserveOnShard reserves one unit for a saga id that lands on sub-row want
// of n (trying ids until the reservation names that sub-row).
func reserveOnShard(t *testing.T, svc *stock.Service, st store.Store, sku string, want int64) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("saga-%s-%d-%d", sku, want, i)
		if err := svc.Reserve(context.Background(), id, "o", []inventory.Line{{SKU: sku, Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
		var r inventory.Reservation
		_ = st.View(context.Background(), func(ctx context.Context, tx store.Tx) (err error) {
			r, err = tx.GetReservation(ctx, id)
			return err
		})
		if len(r.Takes) == 1 && r.Takes[0].Shard == want {
			return id
		}
		if _, err := svc.Release(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no saga id landed on sub-row %d", want)
	return ""
}

// TestReleaseAfterReshardingReturnsUnitsWhereReservationsFindThem: units
// reserved on a sub-row that new reservations no longer use come back to
// one they do use (sub-row shard mod N), or to the stock row when the SKU
// is no longer sharded; the reserved count leaves the sub-row they came
// from, and no unit is created or lost.
func TestReleaseAfterReshardingReturnsUnitsWhereReservationsFindThem(t *testing.T) {
	ctx := context.Background()
	svc, st := newServiceStore(t, map[string]int64{"hot": 16})
	if _, err := svc.SetShards(ctx, "ops", "hot", 8); err != nil {
		t.Fatal(err)
	}
	on6 := reserveOnShard(t, svc, st, "hot", 6)
	on7 := reserveOnShard(t, svc, st, "hot", 7)
	if _, err := svc.SetShards(ctx, "ops", "hot", 4); err != nil {
		t.Fatal(err)
	}
	_, subs := subRows(t, st, "hot")
	// 14 available over 4 sub-rows: 4, 4, 3, 3.
	if subs[6].Reserved != 1 || subs[6].Available != 0 || subs[2].Available != 3 {
		t.Fatalf("after 8 → 4 sub-rows: sub-row 6 %+v, sub-row 2 %+v; want 6 holding only its reserved unit, 2 holding 3", subs[6], subs[2])
	}
	if _, err := svc.Release(ctx, on6); err != nil {
		t.Fatal(err)
	}
	_, subs = subRows(t, st, "hot")
	if subs[6].Reserved != 0 || subs[6].Available != 0 || subs[2].Available != 4 {
		t.Errorf("release from sub-row 6 of 4: sub-row 6 %+v, sub-row 2 %+v; want the unit back on sub-row 2 (6 mod 4)", subs[6], subs[2])
	}
	if _, err := svc.SetShards(ctx, "ops", "hot", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Release(ctx, on7); err != nil {
		t.Fatal(err)
	}
	row, subs := subRows(t, st, "hot")
	if subs[7].Reserved != 0 || subs[7].Available != 0 || row.Available != 16 {
		t.Errorf("release after unsharding: sub-row 7 %+v, stock row %+v; want all 16 on the stock row", subs[7], row)
	}
	if got := mustStock(t, svc, "hot"); got.Available != 16 || got.Reserved != 0 || got.Sold != 0 {
		t.Errorf("view %+v, want 16/0/0", got)
	}
}

// TestSetAvailableOnAShardedSKUSpreadsIt: the operator's quantity is
// spread over the sub-rows and the stock row keeps none.
func TestSetAvailableOnAShardedSKUSpreadsIt(t *testing.T) {
	ctx := context.Background()
	svc, st := newServiceStore(t, map[string]int64{"hot": 3})
	if _, err := svc.SetShards(ctx, "ops", "hot", 3); err != nil {
		t.Fatal(err)
	}
	got, err := svc.SetAvailable(ctx, "ops", "hot", 10)
	if err != nil || got.Available != 10 || got.Shards != 3 {
		t.Fatalf("SetAvailable = %+v, %v; want 10 over 3 sub-rows", got, err)
	}
	row, subs := subRows(t, st, "hot")
	if row.Available != 0 || subs[0].Available != 4 || subs[1].Available != 3 || subs[2].Available != 3 {
		t.Errorf("stock row %d, sub-rows %d/%d/%d; want 0 and 4/3/3", row.Available, subs[0].Available, subs[1].Available, subs[2].Available)
	}
}
