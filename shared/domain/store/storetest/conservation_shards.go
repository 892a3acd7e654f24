package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// wantView checks the operator's view of sku.
func wantView(t *testing.T, s store.Store, what, sku string, available, reserved, sold int64) {
	t.Helper()
	st, err := viewStock(t, s, sku)
	if err != nil {
		t.Fatal(err)
	}
	if st.Available != available || st.Reserved != reserved || st.Sold != sold {
		t.Fatalf("%s: %s is %d/%d/%d (available/reserved/sold), want %d/%d/%d",
			what, sku, st.Available, st.Reserved, st.Sold, available, reserved, sold)
	}
}

func subRows(t *testing.T, s store.Store, sku string) map[int64]inventory.Shard {
	t.Helper()
	out := map[int64]inventory.Shard{}
	for _, sh := range listShards(t, s, sku) {
		out[sh.Shard] = sh
	}
	return out
}

// testShardedStock: a reservation of a sharded SKU takes from one sub-row
// and records it; a release or settlement goes back to that sub-row once
// (a repeat changes nothing); a reservation its sub-row cannot cover takes
// the rest from others; one the SKU cannot cover changes nothing;
// rebalancing and unsharding move only available units.
func testShardedStock(t *testing.T, s store.Store) {
	ctx := testCtx(t)
	sku := newID("sku-hot")
	svc, err := stock.New(stock.Config{Store: s, Now: func() time.Time { return odd }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetAvailable(ctx, "test", sku, 16); err != nil {
		t.Fatal(err)
	}
	st, err := svc.SetShards(ctx, "test", sku, 4)
	if err != nil {
		t.Fatal(err)
	}
	if st.Shards != 4 || st.Available != 16 {
		t.Fatalf("SetShards returned %+v, want 4 sub-rows and 16 available", st)
	}
	rows := subRows(t, s, sku)
	for i := range int64(4) {
		if rows[i].Available != 4 {
			t.Fatalf("sub-row %d holds %d after spreading 16 over 4, want 4", i, rows[i].Available)
		}
	}
	if raw, _ := getStock(t, s, sku); raw.Available != 0 {
		t.Fatalf("the stock row of a sharded SKU keeps %d available, want 0", raw.Available)
	}

	a := newID("saga-a")
	if err := svc.Reserve(ctx, a, "o", []inventory.Line{{SKU: sku, Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	ra, err := getReservation(t, s, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.Takes) != 1 || ra.Takes[0].Quantity != 1 || ra.Takes[0].SKU != sku {
		t.Fatalf("reservation takes %+v, want one unit of one sub-row", ra.Takes)
	}
	took := ra.Takes[0].Shard
	if sh := subRows(t, s, sku)[took]; sh.Available != 3 || sh.Reserved != 1 {
		t.Fatalf("sub-row %d after the reservation: %+v, want 3 available, 1 reserved", took, sh)
	}
	wantView(t, s, "after one reservation", sku, 15, 1, 0)
	for i := 0; i < 2; i++ { // the second is a redelivered release
		if _, err := svc.Release(ctx, a); err != nil {
			t.Fatal(err)
		}
		if sh := subRows(t, s, sku)[took]; sh.Available != 4 || sh.Reserved != 0 {
			t.Fatalf("sub-row %d after release #%d: %+v, want 4 available, 0 reserved", took, i+1, sh)
		}
		wantView(t, s, fmt.Sprintf("after release #%d", i+1), sku, 16, 0, 0)
	}

	b := newID("saga-b")
	if err := svc.Reserve(ctx, b, "o", []inventory.Line{{SKU: sku, Quantity: 6}}); err != nil {
		t.Fatal(err)
	}
	rb, _ := getReservation(t, s, b)
	var sum int64
	for _, tk := range rb.Takes {
		sum += tk.Quantity
	}
	if len(rb.Takes) < 2 || sum != 6 {
		t.Fatalf("a reservation of 6 from sub-rows of 4 took %+v, want 6 from two or more", rb.Takes)
	}
	wantView(t, s, "after reserving 6", sku, 10, 6, 0)
	for i := 0; i < 2; i++ { // the second is a redelivered confirm
		if err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return stock.Settle(ctx, tx, b, odd) }); err != nil {
			t.Fatalf("settle #%d: %v", i+1, err)
		}
		wantView(t, s, fmt.Sprintf("after settle #%d", i+1), sku, 10, 0, 6)
	}
	rows = subRows(t, s, sku)
	for _, tk := range rb.Takes {
		if rows[tk.Shard].Sold < tk.Quantity {
			t.Errorf("sub-row %d sold %d, want at least the %d taken from it", tk.Shard, rows[tk.Shard].Sold, tk.Quantity)
		}
	}

	before := subRows(t, s, sku)
	err = svc.Reserve(ctx, newID("saga-c"), "o", []inventory.Line{{SKU: sku, Quantity: 11}})
	wantKind(t, "reserving more than the SKU has", err, apperr.Rejected)
	wantEqual(t, "sub-rows after a refused reservation", subRows(t, s, sku), before)

	if _, _, err := svc.Rebalance(ctx, "test", sku); err != nil {
		t.Fatal(err)
	}
	wantView(t, s, "after rebalancing", sku, 10, 0, 6)
	rows = subRows(t, s, sku)
	for i := range int64(4) {
		if w := []int64{3, 3, 2, 2}[i]; rows[i].Available != w {
			t.Errorf("sub-row %d holds %d after rebalancing 10 over 4, want %d", i, rows[i].Available, w)
		}
	}

	if _, err := svc.SetShards(ctx, "test", sku, 1); err != nil {
		t.Fatal(err)
	}
	wantView(t, s, "after unsharding", sku, 10, 0, 6)
	if raw, _ := getStock(t, s, sku); raw.Available != 10 {
		t.Errorf("the stock row holds %d after unsharding, want all 10", raw.Available)
	}
	d := newID("saga-d")
	if err := svc.Reserve(ctx, d, "o", []inventory.Line{{SKU: sku, Quantity: 2}}); err != nil {
		t.Fatal(err)
	}
	if rd, _ := getReservation(t, s, d); len(rd.Takes) != 0 {
		t.Errorf("a reservation of an unsharded SKU took sub-rows %+v", rd.Takes)
	}
	wantView(t, s, "after a reservation of the unsharded SKU", sku, 8, 2, 6)

	wantKind(t, "SetShards(0)", errOnly(svc.SetShards(ctx, "test", sku, 0)), apperr.Invalid)
	wantKind(t, "SetShards(too many)", errOnly(svc.SetShards(ctx, "test", sku, inventory.MaxShards+1)), apperr.Invalid)
	wantView(t, s, "after refused SetShards", sku, 8, 2, 6)
}

func errOnly[T any](_ T, err error) error { return err }

// testShardedBurst: many orders reserve one unit each of a sharded SKU at
// once while an operator rebalances and changes the number of sub-rows;
// exactly as many succeed as there were units, and after the orders are
// settled or released every unit is available or sold, none reserved.
func testShardedBurst(t *testing.T, s store.Store) {
	const (
		units  = 25
		orders = 40
	)
	ctx := testCtx(t)
	sku := newID("sku-burst")
	svc, err := stock.New(stock.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetAvailable(ctx, "test", sku, units); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetShards(ctx, "test", sku, 8); err != nil {
		t.Fatal(err)
	}
	retry := func(f func() error) error {
		var err error
		for range 50 {
			if err = f(); !apperr.Is(err, apperr.Transient) {
				return err
			}
		}
		return err
	}
	var (
		wg       sync.WaitGroup
		reserved atomic.Int64
		stop     = make(chan struct{})
		opErr    = make(chan error, 1)
	)
	ids := make([]string, orders)
	errs := make([]error, orders)
	go func() { // the operator
		defer close(opErr)
		for i := int64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := retry(func() error { _, _, err := svc.Rebalance(ctx, "test", sku); return err })
			if err == nil && i%3 == 2 {
				err = retry(func() error { _, err := svc.SetShards(ctx, "test", sku, 4+i%8); return err })
			}
			if err != nil {
				opErr <- err
				return
			}
		}
	}()
	for i := range orders {
		ids[i] = newID("saga-burst")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = retry(func() error {
				return svc.Reserve(ctx, ids[i], "o", []inventory.Line{{SKU: sku, Quantity: 1}})
			})
			if errs[i] == nil {
				reserved.Add(1)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !apperr.Is(err, apperr.Rejected) {
			t.Fatalf("order %d: %v", i, err)
		}
	}
	if reserved.Load() != units {
		t.Fatalf("%d of %d orders reserved a unit of %d", reserved.Load(), orders, units)
	}
	wantView(t, s, "after the burst", sku, 0, units, 0)
	var sold atomic.Int64
	for i := range orders {
		if errs[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				err = retry(func() error {
					return s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return stock.Settle(ctx, tx, ids[i], time.Now()) })
				})
				if err == nil {
					sold.Add(1)
				}
			} else {
				err = retry(func() error { _, err := svc.Release(ctx, ids[i]); return err })
			}
			if err != nil {
				t.Errorf("order %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-opErr; err != nil {
		t.Fatalf("operator: %v", err)
	}
	wantView(t, s, "after settling and releasing", sku, units-sold.Load(), 0, sold.Load())
	for _, sh := range listShards(t, s, sku) {
		if sh.Available < 0 || sh.Reserved != 0 || sh.Sold < 0 {
			t.Errorf("sub-row %d: %+v", sh.Shard, sh)
		}
	}
}
