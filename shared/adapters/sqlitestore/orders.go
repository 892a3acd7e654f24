package sqlitestore

import (
	"context"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
)

const orderColumns = `id, owner_id, customer_id, saga_id, status, currency, items, total_minor,
	created_at, updated_at, version, idempotency_key, status_reason`

const (
	// bucket: the YDB twin's column (schema/sqlite/0017_orders_by_customer.sql),
	// written on insert and never read here.
	sqlInsertOrder = `INSERT INTO orders (` + orderColumns + `, bucket)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlGetOrder    = `SELECT ` + orderColumns + ` FROM orders WHERE id = ?`
	sqlUpdateOrder = `UPDATE orders SET owner_id = ?, customer_id = ?, saga_id = ?, status = ?,
	currency = ?, items = ?, total_minor = ?, created_at = ?, updated_at = ?, version = ?,
	idempotency_key = ?, status_reason = ?
	WHERE id = ? AND version = ?`
	sqlOrderExists = `SELECT 1 FROM orders WHERE id = ?`
	// A customer's orders read backwards along idx_orders_customer_created
	// (customer_id, created_at, id): the first page, and the page after a
	// cursor (a row-value comparison, a range of the same index).
	sqlListOrdersByCustomer = `SELECT ` + orderColumns + ` FROM orders
	WHERE customer_id = ?
	ORDER BY created_at DESC, id DESC LIMIT ?`
	sqlListOrdersByCustomerAfter = `SELECT ` + orderColumns + ` FROM orders
	WHERE customer_id = ? AND (created_at, id) < (?, ?)
	ORDER BY created_at DESC, id DESC LIMIT ?`
)

// InsertOrder implements store.OrderRows; Conflict if the id exists.
func (t *tx) InsertOrder(ctx context.Context, o order.Order) error {
	items, err := toJSON(o.Items, "order items")
	if err != nil {
		return err
	}
	return t.insert(ctx, "order "+quoted(o.ID), sqlInsertOrder,
		o.ID, o.OwnerID, o.CustomerID, o.SagaID, string(o.Status), o.Currency, items, o.TotalMinor,
		tm(o.CreatedAt), tm(o.UpdatedAt), o.Version, o.IdempotencyKey, note(o.StatusReason), bucket.Of(o.ID))
}

// GetOrder implements store.OrderRows; NotFound if missing.
func (t *tx) GetOrder(ctx context.Context, id string) (order.Order, error) {
	o, err := scanOrder(t.queryRowContext(ctx, sqlGetOrder, id))
	if err != nil {
		return order.Order{}, getErr(ctx, err, "order "+quoted(id))
	}
	return o, nil
}

// UpdateOrder implements store.OrderRows: it stores o (including o.Version as
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

// ListOrdersByCustomer implements store.OrderRows. limit <= 0 returns nothing.
func (t *tx) ListOrdersByCustomer(ctx context.Context, customerID string, after store.OrderCursor, limit int) ([]order.Order, error) {
	if limit <= 0 {
		return nil, nil
	}
	q, args := sqlListOrdersByCustomer, []any{customerID, limit}
	if !after.IsZero() {
		q, args = sqlListOrdersByCustomerAfter, []any{customerID, tm(after.CreatedAt), after.ID, limit}
	}
	var out []order.Order
	err := t.queryAll(ctx, "list orders by customer", q, args, func(r rowScanner) error {
		o, err := scanOrder(r)
		out = append(out, o)
		return err
	})
	return out, err
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
