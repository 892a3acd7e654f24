package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

var conservationTests = []subtest{
	{"stock_settled_on_confirm", testSettle},
	{"stock_conservation", testStockConservation},
	{"sharded_stock_takes_and_gives_back", testShardedStock},
	{"sharded_stock_conservation", testShardedConservation},
	{"sharded_stock_burst_with_rebalancing", testShardedBurst},
}

// testSettle: confirming moves the reservation's units from Reserved to
// Sold; a repeat changes nothing; released stock cannot be sold, and sold
// stock is never released.
func testSettle(t *testing.T, s store.Store) {
	sku := newID("sku-settle")
	svc, err := stock.New(stock.Config{Store: s, Now: func() time.Time { return odd }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Seed(testCtx(t), map[string]int64{sku: 10}); err != nil {
		t.Fatal(err)
	}
	saga, other := newID("saga"), newID("saga")
	if err := svc.Reserve(testCtx(t), saga, "o1", []inventory.Line{{SKU: sku, Quantity: 3}}); err != nil {
		t.Fatal(err)
	}
	settle := func(id string) error {
		return tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return stock.Settle(ctx, tx, id, odd) })
	}
	for i := 0; i < 2; i++ { // the second is a repeat (a redelivered confirm)
		if err := settle(saga); err != nil {
			t.Fatalf("settle #%d: %v", i+1, err)
		}
		st, err := getStock(t, s, sku)
		if err != nil {
			t.Fatal(err)
		}
		if st.Available != 7 || st.Reserved != 0 || st.Sold != 3 {
			t.Fatalf("after settle #%d: available %d reserved %d sold %d, want 7/0/3", i+1, st.Available, st.Reserved, st.Sold)
		}
	}
	if released, err := svc.Release(testCtx(t), saga); err != nil || released {
		t.Errorf("Release of a settled reservation = %v, %v; want false, nil", released, err)
	}
	if _, err := svc.Release(testCtx(t), other); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "settling a released reservation", settle(other), apperr.Invalid)
	if err := settle(newID("saga-none")); err != nil {
		t.Errorf("settling a saga without a reservation: %v", err)
	}
	st, _ := getStock(t, s, sku)
	if st.Available+st.Reserved+st.Sold != 10 || st.Sold != 3 {
		t.Errorf("final stock %+v", st)
	}
}

// testStockConservation drives many sagas through random reserve, settle
// and release steps (repeats included) and checks after each that what
// was there equals available + reserved + sold, none negative, and that
// Reserved is exactly what open reservations hold.
func testStockConservation(t *testing.T, s store.Store) { conservationWalk(t, s, false) }

// testShardedConservation is testStockConservation over sharded SKUs (4
// and 16 sub-rows), with operators rebalancing and changing the number of
// sub-rows (1 to 6) between the orders' steps; every sub-row stays
// non-negative too.
func testShardedConservation(t *testing.T, s store.Store) { conservationWalk(t, s, true) }

func conservationWalk(t *testing.T, s store.Store, sharded bool) {
	r := rand.New(rand.NewPCG(7, 13))
	skus := []string{newID("sku-c"), newID("sku-c")}
	const each = 20
	svc, err := stock.New(stock.Config{Store: s, Now: func() time.Time { return odd }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Seed(testCtx(t), map[string]int64{skus[0]: each, skus[1]: each}); err != nil {
		t.Fatal(err)
	}
	ops := 3
	if sharded {
		ops = 5
		for i, n := range []int64{4, 16} {
			if _, err := svc.SetShards(testCtx(t), "test", skus[i], n); err != nil {
				t.Fatal(err)
			}
		}
	}
	type sagaState struct {
		id    string
		lines []inventory.Line
		state string // "", reserved, sold, released
	}
	sagas := make([]*sagaState, 12)
	for i := range sagas {
		sagas[i] = &sagaState{id: newID("saga-c"), lines: []inventory.Line{
			{SKU: skus[0], Quantity: int64(1 + r.IntN(4))}, {SKU: skus[1], Quantity: int64(1 + r.IntN(3))}}}
	}
	for step := 0; step < 120; step++ {
		sg := sagas[r.IntN(len(sagas))]
		switch r.IntN(ops) {
		case 3:
			if _, _, err := svc.Rebalance(testCtx(t), "test", skus[r.IntN(2)]); err != nil {
				t.Fatalf("rebalance: %v", err)
			}
		case 4:
			if _, err := svc.SetShards(testCtx(t), "test", skus[r.IntN(2)], int64(1+r.IntN(6))); err != nil {
				t.Fatalf("set shards: %v", err)
			}
		case 0:
			err := svc.Reserve(testCtx(t), sg.id, "o", sg.lines)
			if err == nil && sg.state == "" {
				sg.state = "reserved"
			} else if err != nil && !apperr.Is(err, apperr.Rejected) {
				t.Fatalf("reserve: %v", err)
			}
		case 1:
			err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return stock.Settle(ctx, tx, sg.id, odd) })
			if err == nil && sg.state == "reserved" {
				sg.state = "sold"
			} else if err != nil && !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("settle: %v", err)
			}
		case 2:
			if _, err := svc.Release(testCtx(t), sg.id); err != nil {
				t.Fatalf("release: %v", err)
			}
			if sg.state == "reserved" {
				sg.state = "released"
			} else if sg.state == "" {
				sg.state = "released" // the marker blocks a later reserve
			}
		}
		wantReserved, wantSold := map[string]int64{}, map[string]int64{}
		for _, x := range sagas {
			for _, l := range x.lines {
				switch x.state {
				case "reserved":
					wantReserved[l.SKU] += l.Quantity
				case "sold":
					wantSold[l.SKU] += l.Quantity
				}
			}
		}
		for _, sku := range skus {
			st, err := viewStock(t, s, sku)
			if err != nil {
				t.Fatal(err)
			}
			for _, sh := range listShards(t, s, sku) {
				if sh.Available < 0 || sh.Reserved < 0 || sh.Sold < 0 {
					t.Fatalf("step %d: %s sub-row %d is negative: %+v", step, sku, sh.Shard, sh)
				}
			}
			if st.Available < 0 || st.Reserved < 0 || st.Sold < 0 ||
				st.Available+st.Reserved+st.Sold != each ||
				st.Reserved != wantReserved[sku] || st.Sold != wantSold[sku] {
				t.Fatalf("step %d, %s: available %d reserved %d sold %d; want sum %d, reserved %d, sold %d",
					step, sku, st.Available, st.Reserved, st.Sold, each, wantReserved[sku], wantSold[sku])
			}
		}
	}
}

// viewStock is the operator's view of a SKU: its stock row plus its sub-rows.
func viewStock(t *testing.T, s store.Store, sku string) (inventory.Stock, error) {
	var st inventory.Stock
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		st, err = stock.ViewIn(ctx, tx, sku)
		return err
	})
	return st, err
}
