package sqlitestore

import (
	"context"

	"ordersaga/shared/domain/payment"
)

const paymentColumns = `id, saga_id, order_id, kind, amount_minor, currency, status, provider_ref,
	reason, created_at`

const (
	sqlInsertPayment = `INSERT INTO payments (` + paymentColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlGetPayment    = `SELECT ` + paymentColumns + ` FROM payments WHERE id = ?`
	sqlPaymentTotals = `SELECT
		COALESCE(SUM(CASE WHEN kind = ? THEN amount_minor END), 0),
		COALESCE(SUM(CASE WHEN kind = ? THEN amount_minor END), 0)
	FROM payments WHERE status = ?`
)

// InsertPayment implements store.PaymentRows; Conflict if the id exists (a
// saga's charge or refund is recorded once).
func (t *tx) InsertPayment(ctx context.Context, e payment.Entry) error {
	return t.insert(ctx, "payment "+quoted(e.ID), sqlInsertPayment,
		e.ID, e.SagaID, e.OrderID, string(e.Kind), e.AmountMinor, e.Currency, string(e.Status),
		e.ProviderRef, note(e.Reason), tm(e.CreatedAt))
}

// GetPayment implements store.PaymentRows; NotFound if missing.
func (t *tx) GetPayment(ctx context.Context, id string) (payment.Entry, error) {
	var (
		e            payment.Entry
		kind, status string
		created      int64
	)
	err := t.queryRowContext(ctx, sqlGetPayment, id).Scan(&e.ID, &e.SagaID, &e.OrderID, &kind,
		&e.AmountMinor, &e.Currency, &status, &e.ProviderRef, &e.Reason, &created)
	if err != nil {
		return payment.Entry{}, getErr(ctx, err, "payment "+quoted(id))
	}
	e.Kind, e.Status, e.CreatedAt = payment.Kind(kind), payment.Status(status), fromTm(created)
	return e, nil
}

// PaymentTotals implements store.PaymentRows: sums of succeeded charges and
// succeeded refunds, in minor units, over all currencies.
func (t *tx) PaymentTotals(ctx context.Context) (charged, refunded int64, err error) {
	err = t.queryRowContext(ctx, sqlPaymentTotals,
		string(payment.Charge), string(payment.Refund), string(payment.Succeeded)).Scan(&charged, &refunded)
	if err != nil {
		return 0, 0, classify(ctx, err, "sqlitestore: payment totals")
	}
	return charged, refunded, nil
}
