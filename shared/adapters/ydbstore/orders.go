package ydbstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
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
DECLARE $bucket AS Int64;
`

const orderValues = `($id, $owner_id, $customer_id, $saga_id, $status, $currency, $items, $total_minor,
	$created_at, $updated_at, $version, $idempotency_key, $status_reason, $bucket)`

// orderWriteColumns are the columns every INSERT and UPSERT writes: all of
// them, with bucket (migration 0017), which no read selects.
const orderWriteColumns = orderColumns + ", bucket"

const (
	yqlInsertOrder = orderDeclares + `
INSERT INTO orders (` + orderWriteColumns + `)
VALUES ` + orderValues + `;`

	// The whole row is written after the version check (see updateVersioned).
	yqlUpsertOrder = orderDeclares + `
UPSERT INTO orders (` + orderWriteColumns + `)
VALUES ` + orderValues + `;`

	yqlGetOrder = `
DECLARE $id AS Utf8;
SELECT ` + orderColumns + ` FROM orders WHERE id = $id;`

	// Existence and version check of Insert/UpdateOrder.
	yqlOrderVersion = `
DECLARE $id AS Utf8;
SELECT version FROM orders WHERE id = $id;`
)

// A customer's orders, newest first (ListOrdersByCustomer), read through
// idx_bucket_customer_created (bucket, customer_id, created_at), migration
// 0017: built by bucketed (buckets.go), per bucket and the NULL bucket one
// LIMITed branch per key range, each read backwards in index order; the
// adapter merges them. The zero CreatedAt is NULL, the oldest: its own
// point prefix, ordered by id.
var (
	// The first page: the dated range and the NULL prefix.
	qListOrdersByCustomer = bucketed(`
DECLARE $customer_id AS Utf8;
DECLARE $epoch AS Timestamp;
DECLARE $limit AS Uint64;
`, []string{orderByCustomerBranch("created_at >= $epoch", "created_at DESC, id DESC"),
		orderByCustomerBranch("created_at IS NULL", "id DESC")})

	// After a dated cursor: the rest of the cursor's time (smaller ids),
	// the older dated range, and the NULL prefix.
	qListOrdersByCustomerAfter = bucketed(`
DECLARE $customer_id AS Utf8;
DECLARE $epoch AS Timestamp;
DECLARE $after_at AS Timestamp;
DECLARE $after_id AS Utf8;
DECLARE $limit AS Uint64;
`, []string{orderByCustomerBranch("created_at = $after_at AND id < $after_id", "id DESC"),
		orderByCustomerBranch("created_at >= $epoch AND created_at < $after_at", "created_at DESC, id DESC"),
		orderByCustomerBranch("created_at IS NULL", "id DESC")})

	// After a cursor in the NULL prefix: the rest of it.
	qListOrdersByCustomerAfterUndated = bucketed(`
DECLARE $customer_id AS Utf8;
DECLARE $after_id AS Utf8;
DECLARE $limit AS Uint64;
`, []string{orderByCustomerBranch("created_at IS NULL AND id < $after_id", "id DESC")})
)

func orderByCustomerBranch(cond, order string) string {
	return "SELECT " + orderColumns + " FROM orders VIEW idx_bucket_customer_created\n" +
		"WHERE " + bucketCond + " AND customer_id = $customer_id AND " + cond + "\n" +
		"ORDER BY " + order + " LIMIT $limit"
}

// ListOrdersByCustomer implements store.OrderRows: every branch's newest
// limit orders, merged newest first (the zero time last, ties by larger
// id), the first limit kept. limit <= 0 returns nothing.
func (t *tx) ListOrdersByCustomer(ctx context.Context, customerID string, after store.OrderCursor, limit int) ([]order.Order, error) {
	if limit <= 0 {
		return nil, nil
	}
	yql, ps := qListOrdersByCustomer, newParams().text("$customer_id", customerID).ts("$epoch", time.Unix(0, 0))
	switch {
	case after.IsZero():
	case after.CreatedAt.IsZero():
		yql, ps = qListOrdersByCustomerAfterUndated, newParams().text("$customer_id", customerID).text("$after_id", after.ID)
	default:
		yql, ps = qListOrdersByCustomerAfter, ps.ts("$after_at", after.CreatedAt).text("$after_id", after.ID)
	}
	var out []order.Order
	err := t.rows(ctx, "list orders by customer", yql, ps.uint("$limit", uint64(limit)), func(r query.Row) error {
		o, err := scanOrder(r)
		out = append(out, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b order.Order) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out[:min(len(out), limit)], nil
}

// InsertOrder implements store.OrderRows; Conflict if the id exists.
func (t *tx) InsertOrder(ctx context.Context, o order.Order) error {
	return t.insert(ctx, rowKey("orders", o.ID), "order "+quoted(o.ID), o.Version, yqlOrderVersion, idParam(o.ID), yqlInsertOrder, orderParams(o))
}

// GetOrder implements store.OrderRows; NotFound if missing.
func (t *tx) GetOrder(ctx context.Context, id string) (order.Order, error) {
	var o order.Order
	err := t.get(ctx, "order "+quoted(id), yqlGetOrder, idParam(id), func(r query.Row) (err error) {
		o, err = scanOrder(r)
		return err
	})
	t.sawGet(rowKey("orders", id), err, o.Version)
	return o, err
}

// UpdateOrder implements store.OrderRows: it stores o (including o.Version as
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
		note("$status_reason", o.StatusReason).
		int("$bucket", bucket.Of(o.ID))
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
