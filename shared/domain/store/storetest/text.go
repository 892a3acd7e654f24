package storetest

import (
	"context"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

var textTests = []subtest{
	{"invalid_utf8_diagnostics_repaired", testDiagnosticsRepaired},
	{"invalid_utf8_refused", testInvalidTextRefused},
}

// cutText is what s[:n] makes of a multi-byte character: not UTF-8.
const cutText = "step failed: caf\xc3"

// testDiagnosticsRepaired: a failure text that is not UTF-8 (cut in the
// middle of a character) is stored with U+FFFD in place of the bad bytes,
// by every adapter, so a failure can always be recorded.
func testDiagnosticsRepaired(t *testing.T, s store.Store) {
	want := store.RepairText(cutText)
	if want == cutText || want != "step failed: caf\uFFFD" {
		t.Fatalf("RepairText(%q) = %q", cutText, want)
	}
	e := sampleEvent()
	e.LastError = cutText
	sg := saga.Instance{ID: newID("saga"), Type: saga.TypeCreateOrder, State: saga.StateFailed,
		LastError: cutText, CreatedAt: odd, UpdatedAt: farFuture, Version: 1}
	insertEvents(t, s, e)
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertSaga(ctx, sg) })
	// An update carries a bad text too (the relay's path).
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOutbox(ctx, e.ID)
		if err != nil {
			return err
		}
		got.LastError, got.Version = cutText+" again", got.Version+1
		return tx.UpdateOutbox(ctx, got, got.Version-1)
	})
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOutbox(ctx, e.ID)
		if err != nil {
			return err
		}
		if got.LastError != want+" again" {
			t.Errorf("outbox last_error = %q, want %q", got.LastError, want+" again")
		}
		gs, err := tx.GetSaga(ctx, sg.ID)
		if err != nil {
			return err
		}
		if gs.LastError != want {
			t.Errorf("saga last_error = %q, want %q", gs.LastError, want)
		}
		return nil
	})
}

// testInvalidTextRefused: any other text that is not UTF-8 (an id, a
// customer) is Invalid and the transaction writes nothing.
func testInvalidTextRefused(t *testing.T, s store.Store) {
	id := newID("ord")
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertOrder(ctx, order.Order{ID: id, CustomerID: "cust-\xff", Status: order.StatusPending,
			CreatedAt: odd, UpdatedAt: odd, Version: 1})
	})
	wantKind(t, "InsertOrder with a customer id that is not UTF-8", err, apperr.Invalid)
	e := sampleEvent()
	e.AggregateID = "agg-\xc3"
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOutbox(ctx, e) })
	wantKind(t, "InsertOutbox with an aggregate id that is not UTF-8", err, apperr.Invalid)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetOrder(ctx, id); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("refused order: GetOrder = %v, want NotFound", err)
		}
		if _, err := tx.GetOutbox(ctx, e.ID); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("refused event: GetOutbox = %v, want NotFound", err)
		}
		return nil
	})
}
