package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

var inventoryTests = []subtest{
	{"put_stock_versions", testPutStock},
	{"list_stock", testListStock},
	{"reservation_round_trip", testReservationRoundTrip},
	{"reservation_update_versions", testReservationUpdate},
	{"put_stock_shard_versions", testPutStockShard},
	{"list_stock_shards", testListStockShards},
}

func getStock(t *testing.T, s store.Store, sku string) (inventory.Stock, error) {
	var st inventory.Stock
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		st, err = tx.GetStock(ctx, sku)
		return err
	})
	return st, err
}

func putStock(t *testing.T, s store.Store, st inventory.Stock, expected int64) error {
	return tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutStock(ctx, st, expected) })
}

func testPutStock(t *testing.T, s store.Store) {
	sku := newID("sku-ü")
	_, err := getStock(t, s, sku)
	wantKind(t, "GetStock of an unknown SKU", err, apperr.NotFound)

	v1 := inventory.Stock{SKU: sku, Available: 10, Reserved: 0, UpdatedAt: odd, Version: 1}
	if err := putStock(t, s, v1, 0); err != nil {
		t.Fatalf("PutStock(expected 0) of a new SKU: %v", err)
	}
	wantKind(t, "PutStock(expected 0) of an existing SKU", putStock(t, s, v1, 0), apperr.Conflict)

	v2 := inventory.Stock{SKU: sku, Available: 7, Reserved: 3, UpdatedAt: odd.Add(time.Second), Version: 2}
	if err := putStock(t, s, v2, 1); err != nil {
		t.Fatalf("PutStock(expected 1): %v", err)
	}
	stale := v2
	stale.Available, stale.Version = 0, 3
	wantKind(t, "PutStock with a stale expected version", putStock(t, s, stale, 1), apperr.Conflict)
	ghost := inventory.Stock{SKU: newID("sku"), Available: 1, Version: 6}
	wantKind(t, "PutStock(expected 5) of an unknown SKU", putStock(t, s, ghost, 5), apperr.NotFound)

	got, err := getStock(t, s, sku)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetStock", canonStock(got, keep), canonStock(v2, stored))
	_, err = getStock(t, s, ghost.SKU)
	wantKind(t, "GetStock after a refused PutStock", err, apperr.NotFound)

	zero := inventory.Stock{SKU: newID("sku")}
	if err := putStock(t, s, zero, 0); err != nil {
		t.Fatal(err)
	}
	got, err = getStock(t, s, zero.SKU)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetStock of zero values", canonStock(got, keep), canonStock(zero, stored))
}

func testListStock(t *testing.T, s store.Store) {
	prefix := newID("sku-list")
	skus := []string{prefix + "-b", prefix + "-a", prefix + "-c"}
	for i, sku := range skus {
		if err := putStock(t, s, inventory.Stock{SKU: sku, Available: int64(i), Version: 1}, 0); err != nil {
			t.Fatal(err)
		}
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListStock(ctx)
		if err != nil {
			return err
		}
		all := idsOf(got, func(st inventory.Stock) string { return st.SKU })
		if !sort.StringsAreSorted(all) {
			t.Errorf("ListStock is not ordered by SKU")
		}
		want := []string{prefix + "-a", prefix + "-b", prefix + "-c"}
		if mine := onlyMine(all, setOf(skus...)); !equalIDs(mine, want) {
			t.Errorf("ListStock SKUs %v, want %v", mine, want)
		}
		for _, st := range got {
			if st.SKU == prefix+"-c" && st.Available != 2 {
				t.Errorf("ListStock %s available %d, want 2", st.SKU, st.Available)
			}
		}
		return nil
	})
}

func getReservation(t *testing.T, s store.Store, id string) (inventory.Reservation, error) {
	var r inventory.Reservation
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		r, err = tx.GetReservation(ctx, id)
		return err
	})
	return r, err
}

func testReservationRoundTrip(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		r    inventory.Reservation
	}{
		{"every_field", inventory.Reservation{
			ID: newID("saga"), OrderID: newID("ord"),
			Lines:  []inventory.Line{{SKU: "a", Quantity: 3}, {SKU: "товар-б", Quantity: 1 << 40}},
			Status: inventory.Rejected, Reason: "out of stock: товар-б", CreatedAt: odd,
			UpdatedAt: odd.Add(time.Second), Version: 4,
		}},
		{"takes", inventory.Reservation{
			ID: newID("saga"), OrderID: newID("ord"), Lines: []inventory.Line{{SKU: "hot", Quantity: 5}},
			Takes:  []inventory.Take{{SKU: "hot", Shard: 7, Quantity: 3}, {SKU: "hot", Shard: 0, Quantity: 2}},
			Status: inventory.Reserved, CreatedAt: odd, UpdatedAt: odd, Version: 1,
		}},
		{"zero_values", inventory.Reservation{ID: newID("saga")}},
		{"empty_lines", inventory.Reservation{ID: newID("saga"), Lines: []inventory.Line{}, CreatedAt: epoch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertReservation(ctx, tc.r) })
			got, err := getReservation(t, s, tc.r.ID)
			if err != nil {
				t.Fatalf("GetReservation: %v", err)
			}
			wantEqual(t, "GetReservation", canonReservation(got, keep), canonReservation(tc.r, stored))
			dup := tc.r
			dup.Status = inventory.Released
			err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertReservation(ctx, dup) })
			wantKind(t, "second InsertReservation with the same id", err, apperr.Conflict)
		})
	}
	_, err := getReservation(t, s, newID("missing"))
	wantKind(t, "GetReservation of a missing id", err, apperr.NotFound)
}

func testReservationUpdate(t *testing.T, s store.Store) {
	r := inventory.Reservation{ID: newID("saga"), OrderID: "o", Lines: []inventory.Line{{SKU: "a", Quantity: 1}},
		Status: inventory.Reserved, CreatedAt: odd, UpdatedAt: odd, Version: 1}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertReservation(ctx, r) })
	next := r
	next.Status, next.UpdatedAt, next.Version = inventory.Released, odd.Add(time.Minute), 2
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateReservation(ctx, next, 1) })
	stale := next
	stale.Status, stale.Version = inventory.Reserved, 3
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateReservation(ctx, stale, 1) })
	wantKind(t, "UpdateReservation with a stale expected version", err, apperr.Conflict)
	ghost := inventory.Reservation{ID: newID("saga"), Version: 2}
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateReservation(ctx, ghost, 1) })
	wantKind(t, "UpdateReservation of a missing reservation", err, apperr.NotFound)
	got, err := getReservation(t, s, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "reservation after update", canonReservation(got, keep), canonReservation(next, stored))
}
