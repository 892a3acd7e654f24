package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/order"
)

// Table orders (schema/ydb/0001_orders.sql).

const orderColumns = `id, owner_id, customer_id, saga_id, status, currency, items, total_minor,
	created_at, updated_at, version, idempotency_key, status_reason`

const orderDeclares = `
DECLARE $id AS Utf8;
DECLARE $owner_id AS Utf8;
DECLARE $customer_id AS Utf8;
DECLARE $saga_id AS Utf8;
DECLARE $status AS Utf8;
DECLARE $currency AS Utf8;
DECLARE $items AS Json;
DECLARE $total_minor AS Int64;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
DECLARE $idempotency_key AS Utf8;
DECLARE $status_reason AS Utf8;
`

const orderValues = `($id, $owner_id, $customer_id, $saga_id, $status, $currency, $items, $total_minor,
	$created_at, $updated_at, $version, $idempotency_key, $status_reason)`

const (
	yqlInsertOrder = orderDeclares + `
INSERT INTO orders (` + orderColumns + `)
VALUES ` + orderValues + `;`

	// The whole row is written after the version check (see updateVersioned).
	yqlUpsertOrder = orderDeclares + `
UPSERT INTO orders (` + orderColumns + `)
VALUES ` + orderValues + `;`

	yqlGetOrder = `
DECLARE $id AS Utf8;
SELECT ` + orderColumns + ` FROM orders WHERE id = $id;`

	// Existence and version check of Insert/UpdateOrder.
	yqlOrderVersion = `
DECLARE $id AS Utf8;
SELECT version FROM orders WHERE id = $id;`
)

// InsertOrder implements store.Orders; Conflict if the id exists.
func (t *tx) InsertOrder(ctx context.Context, o order.Order) error {
	return t.insert(ctx, rowKey("orders", o.ID), "order "+quoted(o.ID), o.Version, yqlOrderVersion, idParam(o.ID), yqlInsertOrder, orderParams(o))
}

// GetOrder implements store.Orders; NotFound if missing.
func (t *tx) GetOrder(ctx context.Context, id string) (order.Order, error) {
	var o order.Order
	err := t.get(ctx, "order "+quoted(id), yqlGetOrder, idParam(id), func(r query.Row) (err error) {
		o, err = scanOrder(r)
		return err
	})
	t.sawGet(rowKey("orders", id), err, o.Version)
	return o, err
}

// UpdateOrder implements store.Orders: it stores o (including o.Version as
// given) if the stored version is expectedVersion; Conflict if not,
// NotFound if the order does not exist.
func (t *tx) UpdateOrder(ctx context.Context, o order.Order, expectedVersion int64) error {
	return t.updateVersioned(ctx, rowKey("orders", o.ID), "order "+quoted(o.ID), expectedVersion, o.Version,
		yqlOrderVersion, idParam(o.ID), yqlUpsertOrder, orderParams(o))
}

// idParam binds the $id key shared by the single-key tables.
func idParam(id string) *paramList { return newParams().text("$id", id) }

// orderParams binds every column of o (orderDeclares).
func orderParams(o order.Order) *paramList {
	return newParams().
		text("$id", o.ID).
		text("$owner_id", o.OwnerID).
		text("$customer_id", o.CustomerID).
		text("$saga_id", o.SagaID).
		text("$status", string(o.Status)).
		text("$currency", o.Currency).
		json("$items", o.Items).
		int("$total_minor", o.TotalMinor).
		optTS("$created_at", o.CreatedAt).
		optTS("$updated_at", o.UpdatedAt).
		int("$version", o.Version).
		text("$idempotency_key", o.IdempotencyKey).
		note("$status_reason", o.StatusReason)
}

func scanOrder(r query.Row) (order.Order, error) {
	var (
		o                order.Order
		status, items    string
		created, updated *time.Time
	)
	if err := r.ScanNamed(
		query.Named("id", &o.ID),
		query.Named("owner_id", &o.OwnerID),
		query.Named("customer_id", &o.CustomerID),
		query.Named("saga_id", &o.SagaID),
		query.Named("status", &status),
		query.Named("currency", &o.Currency),
		query.Named("items", &items),
		query.Named("total_minor", &o.TotalMinor),
		query.Named("created_at", &created),
		query.Named("updated_at", &updated),
		query.Named("version", &o.Version),
		query.Named("idempotency_key", &o.IdempotencyKey),
		query.Named("status_reason", &o.StatusReason),
	); err != nil {
		return order.Order{}, err
	}
	o.Status = order.Status(status)
	o.CreatedAt, o.UpdatedAt = fromTS(created), fromTS(updated)
	return o, fromJSON(items, "order items", &o.Items)
}
