package storetest

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
)

var orderTests = []subtest{
	{"round_trip", testOrderRoundTrip},
	{"not_found", testOrderNotFound},
	{"duplicate_insert", testOrderDuplicate},
	{"update_versions", testOrderUpdate},
}

func testOrderRoundTrip(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		o    order.Order
	}{
		{"every_field", order.Order{
			ID: newID("ord"), OwnerID: "subject:аккаунт/1", CustomerID: "Клиент ✓ 🚀 \"quoted\"",
			SagaID: newID("saga"), Status: order.StatusCancelled, Currency: "RUB",
			Items: []order.Item{
				{SKU: "sku-α", Quantity: 1_000_000, UnitPriceMinor: 1_000_000_000_000},
				{SKU: "b.2_x", Quantity: 1, UnitPriceMinor: 1},
			},
			TotalMinor: 1<<62 + 7, CreatedAt: odd, UpdatedAt: odd.Add(time.Hour), Version: 42,
			IdempotencyKey: "ключ-🔑", StatusReason: "out of stock: sku-α",
		}},
		{"zero_values", order.Order{ID: newID("ord")}},
		{"epoch_and_empty_items", order.Order{ID: newID("ord"), Items: []order.Item{}, CreatedAt: epoch, UpdatedAt: epoch.Add(time.Microsecond)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, tc.o) })
			for _, read := range []struct {
				name string
				run  func(*testing.T, store.Store, func(context.Context, store.Tx) error)
			}{{"InTx", mustTx}, {"View", mustView}} {
				read.run(t, s, func(ctx context.Context, tx store.Tx) error {
					got, err := tx.GetOrder(ctx, tc.o.ID)
					if err != nil {
						return err
					}
					wantEqual(t, "GetOrder in "+read.name, canonOrder(got, keep), canonOrder(tc.o, stored))
					return nil
				})
			}
		})
	}
}

func testOrderNotFound(t *testing.T, s store.Store) {
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, newID("missing"))
		wantKind(t, "GetOrder of a missing id", err, apperr.NotFound)
		return nil
	})
}

func testOrderDuplicate(t *testing.T, s store.Store) {
	o := sampleOrder()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) })
	dup := o
	dup.CustomerID, dup.Version = "someone else", 9
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, dup) })
	wantKind(t, "second InsertOrder with the same id", err, apperr.Conflict)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOrder(ctx, o.ID)
		if err != nil {
			return err
		}
		wantEqual(t, "order after a refused duplicate", canonOrder(got, keep), canonOrder(o, stored))
		return nil
	})
}

func testOrderUpdate(t *testing.T, s store.Store) {
	o := sampleOrder()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) })

	next := o
	next.Transition(order.StatusConfirmed, "", odd.Add(time.Minute)) // Version 1 → 2
	next.Items = append([]order.Item(nil), order.Item{SKU: "new", Quantity: 3, UnitPriceMinor: 5})
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOrder(ctx, next, 1) })

	stale := next
	stale.Status, stale.Version = order.StatusFailed, 3
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOrder(ctx, stale, 1) })
	wantKind(t, "UpdateOrder with a stale expected version", err, apperr.Conflict)
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOrder(ctx, stale, 7) })
	wantKind(t, "UpdateOrder with a future expected version", err, apperr.Conflict)

	missing := sampleOrder()
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOrder(ctx, missing, 1) })
	wantKind(t, "UpdateOrder of a missing order", err, apperr.NotFound)

	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOrder(ctx, o.ID)
		if err != nil {
			return err
		}
		if got.Version != 2 {
			t.Errorf("stored version %d, want 2 (the value the caller wrote)", got.Version)
		}
		wantEqual(t, "order after update", canonOrder(got, keep), canonOrder(next, stored))
		_, err = tx.GetOrder(ctx, missing.ID)
		wantKind(t, "GetOrder after a failed update of a missing order", err, apperr.NotFound)
		return nil
	})
}
