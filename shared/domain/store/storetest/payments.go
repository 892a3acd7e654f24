package storetest

import (
	"context"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/store"
)

var paymentTests = []subtest{
	{"round_trip", testPaymentRoundTrip},
	{"totals", testPaymentTotals},
}

func testPaymentRoundTrip(t *testing.T, s store.Store) {
	sagaID := newID("saga")
	cases := []payment.Entry{
		{ID: payment.EntryID(sagaID, payment.Charge), SagaID: sagaID, OrderID: newID("ord"), Kind: payment.Charge,
			AmountMinor: 1 << 50, Currency: "RUB", Status: payment.Declined, ProviderRef: "prov-№1",
			Reason: "недостаточно средств", CreatedAt: odd},
		{ID: newID("pay")}, // zero values
	}
	for _, e := range cases {
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertPayment(ctx, e) })
		var got payment.Entry
		mustView(t, s, func(ctx context.Context, tx store.Tx) (err error) {
			got, err = tx.GetPayment(ctx, e.ID)
			return err
		})
		wantEqual(t, "GetPayment", canonPayment(got, keep), canonPayment(e, stored))
		dup := e
		dup.Status = payment.Succeeded
		err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertPayment(ctx, dup) })
		wantKind(t, "second InsertPayment with the same id", err, apperr.Conflict)
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetPayment(ctx, newID("missing"))
		wantKind(t, "GetPayment of a missing id", err, apperr.NotFound)
		return nil
	})
}

func testPaymentTotals(t *testing.T, s store.Store) {
	totals := func() (charged, refunded int64) {
		mustView(t, s, func(ctx context.Context, tx store.Tx) (err error) {
			charged, refunded, err = tx.PaymentTotals(ctx)
			return err
		})
		return charged, refunded
	}
	c0, r0 := totals()
	entry := func(k payment.Kind, st payment.Status, amount int64) payment.Entry {
		sagaID := newID("saga")
		return payment.Entry{ID: payment.EntryID(sagaID, k), SagaID: sagaID, Kind: k, AmountMinor: amount,
			Currency: "RUB", Status: st, CreatedAt: odd}
	}
	es := []payment.Entry{
		entry(payment.Charge, payment.Succeeded, 1000),
		entry(payment.Charge, payment.Succeeded, 234),
		entry(payment.Charge, payment.Declined, 500),
		entry(payment.Refund, payment.Succeeded, 300),
		entry(payment.Refund, payment.Declined, 7),
	}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range es {
			if err := tx.InsertPayment(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	c1, r1 := totals()
	if c1-c0 != 1234 || r1-r0 != 300 {
		t.Errorf("PaymentTotals grew by charged %d, refunded %d; want 1234, 300", c1-c0, r1-r0)
	}
}
