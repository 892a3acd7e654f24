package sqlitestore

import (
	"context"

	"ordersaga/shared/domain/order"
)

const orderColumns = `id, owner_id, customer_id, saga_id, status, currency, items, total_minor,
	created_at, updated_at, version, idempotency_key, status_reason`

const (
	sqlInsertOrder = `INSERT INTO orders (` + orderColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlGetOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = ?`
	sqlUpdateOrder = `UPDATE orders SET owner_id = ?, customer_id = ?, saga_id = ?, status = ?,
	currency = ?, items = ?, total_minor = ?, created_at = ?, updated_at = ?, version = ?,
	idempotency_key = ?, status_reason = ?
	WHERE id = ? AND version = ?`
	sqlOrderExists = `SELECT 1 FROM orders WHERE id = ?`
)

// InsertOrder implements store.Orders; Conflict if the id exists.
func (t *tx) InsertOrder(ctx context.Context, o order.Order) error {
	items, err := toJSON(o.Items, "order items")
	if err != nil {
		return err
	}
	return t.insert(ctx, "order "+quoted(o.ID), sqlInsertOrder,
		o.ID, o.OwnerID, o.CustomerID, o.SagaID, string(o.Status), o.Currency, items, o.TotalMinor,
		tm(o.CreatedAt), tm(o.UpdatedAt), o.Version, o.IdempotencyKey, note(o.StatusReason))
}

// GetOrder implements store.Orders; NotFound if missing.
func (t *tx) GetOrder(ctx context.Context, id string) (order.Order, error) {
	o, err := scanOrder(t.queryRowContext(ctx, sqlGetOrder, id))
	if err != nil {
		return order.Order{}, getErr(ctx, err, "order "+quoted(id))
	}
	return o, nil
}

// UpdateOrder implements store.Orders: it stores o (including o.Version as
// given) if the stored version is expectedVersion; Conflict if not, NotFound
// if the order does not exist.
func (t *tx) UpdateOrder(ctx context.Context, o order.Order, expectedVersion int64) error {
	items, err := toJSON(o.Items, "order items")
	if err != nil {
		return err
	}
	return t.updateVersioned(ctx, "order "+quoted(o.ID), expectedVersion, sqlUpdateOrder,
		[]any{o.OwnerID, o.CustomerID, o.SagaID, string(o.Status), o.Currency, items, o.TotalMinor,
			tm(o.CreatedAt), tm(o.UpdatedAt), o.Version, o.IdempotencyKey, note(o.StatusReason),
			o.ID, expectedVersion},
		sqlOrderExists, o.ID)
}

func scanOrder(r rowScanner) (order.Order, error) {
	var (
		o                order.Order
		status, items    string
		created, updated int64
	)
	if err := r.Scan(&o.ID, &o.OwnerID, &o.CustomerID, &o.SagaID, &status, &o.Currency, &items,
		&o.TotalMinor, &created, &updated, &o.Version, &o.IdempotencyKey, &o.StatusReason); err != nil {
		return order.Order{}, err
	}
	o.Status = order.Status(status)
	o.CreatedAt, o.UpdatedAt = fromTm(created), fromTm(updated)
	return o, fromJSON(items, &o.Items, "order items")
}
