package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/payment"
)

// Table payments (schema/ydb/0007_payments.sql).

const paymentColumns = `id, saga_id, order_id, kind, amount_minor, currency, status, provider_ref,
	reason, created_at`

const (
	yqlPaymentExists = `
DECLARE $id AS Utf8;
SELECT id FROM payments WHERE id = $id;`

	yqlInsertPayment = `
DECLARE $id AS Utf8;
DECLARE $saga_id AS Utf8;
DECLARE $order_id AS Utf8;
DECLARE $kind AS Utf8;
DECLARE $amount_minor AS Int64;
DECLARE $currency AS Utf8;
DECLARE $status AS Utf8;
DECLARE $provider_ref AS Utf8;
DECLARE $reason AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
INSERT INTO payments (` + paymentColumns + `)
VALUES ($id, $saga_id, $order_id, $kind, $amount_minor, $currency, $status, $provider_ref,
	$reason, $created_at);`

	yqlGetPayment = `
DECLARE $id AS Utf8;
SELECT ` + paymentColumns + ` FROM payments WHERE id = $id;`

	// Sums per kind of the succeeded entries (a full scan, see the schema);
	// PaymentTotals picks charge and refund.
	yqlPaymentTotals = `
DECLARE $succeeded AS Utf8;
SELECT kind, SUM(amount_minor) AS total
FROM payments
WHERE status = $succeeded
GROUP BY kind;`
)

// InsertPayment implements store.PaymentRows; Conflict if the id exists (a
// saga's charge or refund is recorded once).
func (t *tx) InsertPayment(ctx context.Context, e payment.Entry) error {
	return t.insert(ctx, rowKey("payments", e.ID), "payment "+quoted(e.ID), 0, yqlPaymentExists, idParam(e.ID),
		yqlInsertPayment, paymentParams(e))
}

// GetPayment implements store.PaymentRows; NotFound if missing.
func (t *tx) GetPayment(ctx context.Context, id string) (payment.Entry, error) {
	var e payment.Entry
	err := t.get(ctx, "payment "+quoted(id), yqlGetPayment, idParam(id), func(r query.Row) error {
		var (
			kind, status string
			created      *time.Time
		)
		if err := r.ScanNamed(
			query.Named("id", &e.ID),
			query.Named("saga_id", &e.SagaID),
			query.Named("order_id", &e.OrderID),
			query.Named("kind", &kind),
			query.Named("amount_minor", &e.AmountMinor),
			query.Named("currency", &e.Currency),
			query.Named("status", &status),
			query.Named("provider_ref", &e.ProviderRef),
			query.Named("reason", &e.Reason),
			query.Named("created_at", &created),
		); err != nil {
			return err
		}
		e.Kind, e.Status, e.CreatedAt = payment.Kind(kind), payment.Status(status), fromTS(created)
		return nil
	})
	return e, err
}

// PaymentTotals implements store.PaymentRows: sums of succeeded charges and
// succeeded refunds, in minor units, over all currencies.
func (t *tx) PaymentTotals(ctx context.Context) (charged, refunded int64, err error) {
	err = t.rows(ctx, "payment totals", yqlPaymentTotals,
		newParams().text("$succeeded", string(payment.Succeeded)),
		func(r query.Row) error {
			var (
				kind  string
				total int64
			)
			if err := r.ScanNamed(query.Named("kind", &kind), query.Named("total", &total)); err != nil {
				return err
			}
			switch payment.Kind(kind) {
			case payment.Charge:
				charged = total
			case payment.Refund:
				refunded = total
			}
			return nil
		})
	if err != nil {
		return 0, 0, err
	}
	return charged, refunded, nil
}

func paymentParams(e payment.Entry) *paramList {
	return newParams().
		text("$id", e.ID).
		text("$saga_id", e.SagaID).
		text("$order_id", e.OrderID).
		text("$kind", string(e.Kind)).
		int("$amount_minor", e.AmountMinor).
		text("$currency", e.Currency).
		text("$status", string(e.Status)).
		text("$provider_ref", e.ProviderRef).
		note("$reason", e.Reason).
		optTS("$created_at", e.CreatedAt)
}
