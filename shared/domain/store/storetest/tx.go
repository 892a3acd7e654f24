package storetest

import (
	"context"
	"errors"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

var txTests = []subtest{
	{"commit_visible_to_view", testCommitVisible},
	{"rollback_on_error", testRollbackOnError},
	{"rollback_on_panic", testRollbackOnPanic},
	{"view_cannot_write", testViewCannotWrite},
}

// sampleOrder is a minimal valid order with a fresh id.
func sampleOrder() order.Order {
	return order.Order{
		ID: newID("ord"), OwnerID: "owner", CustomerID: "cust", Status: order.StatusPending,
		Currency: "RUB", Items: []order.Item{{SKU: "sku-1", Quantity: 2, UnitPriceMinor: 150}},
		TotalMinor: 300, CreatedAt: odd, UpdatedAt: odd, Version: 1,
	}
}

// sampleSaga is a saga that no due or by-state list of another subtest finds.
func sampleSaga() saga.Instance {
	return saga.Instance{
		ID: newID("saga"), Type: saga.TypeCreateOrder, State: saga.StateCompleted,
		NextAttemptAt: farFuture, UpdatedAt: farFuture, Version: 1,
	}
}

func testCommitVisible(t *testing.T, s store.Store) {
	o := sampleOrder()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) })
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOrder(ctx, o.ID)
		if err != nil {
			return err
		}
		wantEqual(t, "order read after commit", canonOrder(got, keep), canonOrder(o, stored))
		return nil
	})
}

// assertAbsent checks that neither the order nor the saga was written.
func assertAbsent(t *testing.T, s store.Store, orderID, sagaID string) {
	t.Helper()
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, orderID)
		wantKind(t, "GetOrder after rollback", err, apperr.NotFound)
		_, err = tx.GetSaga(ctx, sagaID)
		wantKind(t, "GetSaga after rollback", err, apperr.NotFound)
		return nil
	})
}

func testRollbackOnError(t *testing.T, s store.Store) {
	o, sg := sampleOrder(), sampleSaga()
	sentinel := apperr.New(apperr.Rejected, "storetest: business rule refused")
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOrder(ctx, o); err != nil {
			return err
		}
		if err := tx.InsertSaga(ctx, sg); err != nil {
			return err
		}
		return sentinel
	})
	if !errors.Is(err, sentinel) || apperr.KindOf(err) != apperr.Rejected {
		t.Fatalf("InTx returned %v (kind %s), want fn's error unchanged", err, kindOf(err))
	}
	assertAbsent(t, s, o.ID, sg.ID)
}

func testRollbackOnPanic(t *testing.T, s store.Store) {
	o, sg := sampleOrder(), sampleSaga()
	type boom struct{ id string }
	want := boom{o.ID}
	func() {
		defer func() {
			if got := recover(); got != want {
				t.Errorf("recovered %v, want the panic value %v to propagate", got, want)
			}
		}()
		_ = s.InTx(testCtx(t), func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertOrder(ctx, o); err != nil {
				return err
			}
			if err := tx.InsertSaga(ctx, sg); err != nil {
				return err
			}
			panic(want)
		})
		t.Error("InTx returned instead of propagating the panic")
	}()
	assertAbsent(t, s, o.ID, sg.ID)
	// The store is still usable: the panicking transaction released its lock.
	o2 := sampleOrder()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o2) })
}

func testViewCannotWrite(t *testing.T, s store.Store) {
	o := sampleOrder()
	var writeErr error
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		writeErr = tx.InsertOrder(ctx, o)
		return writeErr
	})
	if writeErr == nil {
		t.Error("InsertOrder inside View succeeded, want an error")
	}
	if err == nil {
		t.Error("View with a write returned nil, want an error")
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, o.ID)
		wantKind(t, "GetOrder after write in View", err, apperr.NotFound)
		return nil
	})
}
