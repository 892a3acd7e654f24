package ydbstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/inventory"
)

// Tables stock, stock_shards and reservations (schema/ydb/0006_inventory.sql,
// 0016_stock_shards.sql).

const stockColumns = `sku, available, reserved, sold, shards, updated_at, version`

const stockDeclares = `
DECLARE $sku AS Utf8;
DECLARE $available AS Int64;
DECLARE $reserved AS Int64;
DECLARE $sold AS Int64;
DECLARE $shards AS Int64;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
`

const shardColumns = `sku, shard, available, reserved, sold, updated_at, version`

const shardDeclares = `
DECLARE $sku AS Utf8;
DECLARE $shard AS Int64;
DECLARE $available AS Int64;
DECLARE $reserved AS Int64;
DECLARE $sold AS Int64;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
`

const reservationColumns = `id, order_id, lines, takes, status, reason, created_at, updated_at, version`

const reservationDeclares = `
DECLARE $id AS Utf8;
DECLARE $order_id AS Utf8;
DECLARE $lines AS Json;
DECLARE $takes AS Optional<Json>;
DECLARE $status AS Utf8;
DECLARE $reason AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
`

const reservationValues = `($id, $order_id, $lines, $takes, $status, $reason, $created_at, $updated_at, $version)`

const (
	yqlGetStock = `
DECLARE $sku AS Utf8;
SELECT ` + stockColumns + ` FROM stock WHERE sku = $sku;`

	yqlStockVersion = `
DECLARE $sku AS Utf8;
SELECT version FROM stock WHERE sku = $sku;`

	yqlInsertStock = stockDeclares + `
INSERT INTO stock (` + stockColumns + `)
VALUES ($sku, $available, $reserved, $sold, $shards, $updated_at, $version);`

	yqlUpsertStock = stockDeclares + `
UPSERT INTO stock (` + stockColumns + `)
VALUES ($sku, $available, $reserved, $sold, $shards, $updated_at, $version);`

	yqlGetShard = `
DECLARE $sku AS Utf8;
DECLARE $shard AS Int64;
SELECT ` + shardColumns + ` FROM stock_shards WHERE sku = $sku AND shard = $shard;`

	yqlShardVersion = `
DECLARE $sku AS Utf8;
DECLARE $shard AS Int64;
SELECT version FROM stock_shards WHERE sku = $sku AND shard = $shard;`

	yqlInsertShard = shardDeclares + `
INSERT INTO stock_shards (` + shardColumns + `)
VALUES ($sku, $shard, $available, $reserved, $sold, $updated_at, $version);`

	yqlUpsertShard = shardDeclares + `
UPSERT INTO stock_shards (` + shardColumns + `)
VALUES ($sku, $shard, $available, $reserved, $sold, $updated_at, $version);`

	// One SKU's sub-rows: a primary-key prefix (at most MaxShards rows).
	yqlListShards = `
DECLARE $sku AS Utf8;
SELECT ` + shardColumns + ` FROM stock_shards WHERE sku = $sku ORDER BY shard;`

	// The whole (small) stock table in primary-key order.
	yqlListStock = `
SELECT ` + stockColumns + ` FROM stock ORDER BY sku;`

	yqlGetReservation = `
DECLARE $id AS Utf8;
SELECT ` + reservationColumns + ` FROM reservations WHERE id = $id;`

	yqlReservationVersion = `
DECLARE $id AS Utf8;
SELECT version FROM reservations WHERE id = $id;`

	yqlInsertReservation = reservationDeclares + `
INSERT INTO reservations (` + reservationColumns + `)
VALUES ` + reservationValues + `;`

	yqlUpsertReservation = reservationDeclares + `
UPSERT INTO reservations (` + reservationColumns + `)
VALUES ` + reservationValues + `;`
)

// GetStock implements store.StockRows; NotFound if the SKU has no row.
func (t *tx) GetStock(ctx context.Context, sku string) (inventory.Stock, error) {
	var s inventory.Stock
	err := t.get(ctx, "stock of "+quoted(sku), yqlGetStock, skuParam(sku), func(r query.Row) (err error) {
		s, err = scanStock(r)
		return err
	})
	t.sawGet(rowKey("stock", sku), err, s.Version)
	return s, err
}

// PutStock implements store.StockRows. expectedVersion 0 inserts (Conflict if
// the SKU exists); otherwise it overwrites the row (storing s.Version as
// given) if its version is expectedVersion: Conflict if not, NotFound if the
// SKU has no row.
func (t *tx) PutStock(ctx context.Context, s inventory.Stock, expectedVersion int64) error {
	what := "stock of " + quoted(s.SKU)
	if expectedVersion == 0 {
		return t.insert(ctx, rowKey("stock", s.SKU), what, s.Version, yqlStockVersion, skuParam(s.SKU), yqlInsertStock, stockParams(s))
	}
	return t.updateVersioned(ctx, rowKey("stock", s.SKU), what, expectedVersion, s.Version, yqlStockVersion, skuParam(s.SKU),
		yqlUpsertStock, stockParams(s))
}

// ListStock implements store.StockRows: every SKU, ordered by SKU.
func (t *tx) ListStock(ctx context.Context) ([]inventory.Stock, error) {
	var out []inventory.Stock
	err := t.rows(ctx, "list stock", yqlListStock, newParams(), func(r query.Row) error {
		s, err := scanStock(r)
		out = append(out, s)
		return err
	})
	return out, err
}

// GetStockShard implements store.StockRows; NotFound if the sub-row is missing.
func (t *tx) GetStockShard(ctx context.Context, sku string, shard int64) (inventory.Shard, error) {
	var s inventory.Shard
	err := t.get(ctx, shardWhat(sku, shard), yqlGetShard, shardParam(sku, shard), func(r query.Row) (err error) {
		s, err = scanShard(r)
		return err
	})
	t.sawGet(shardKey(sku, shard), err, s.Version)
	return s, err
}

// PutStockShard implements store.StockRows, as PutStock does for a sub-row.
func (t *tx) PutStockShard(ctx context.Context, s inventory.Shard, expectedVersion int64) error {
	key, what := shardKey(s.SKU, s.Shard), shardWhat(s.SKU, s.Shard)
	if expectedVersion == 0 {
		return t.insert(ctx, key, what, s.Version, yqlShardVersion, shardParam(s.SKU, s.Shard), yqlInsertShard, shardParams(s))
	}
	return t.updateVersioned(ctx, key, what, expectedVersion, s.Version, yqlShardVersion, shardParam(s.SKU, s.Shard),
		yqlUpsertShard, shardParams(s))
}

// ListStockShards implements store.StockRows: one SKU's sub-rows by shard.
func (t *tx) ListStockShards(ctx context.Context, sku string) ([]inventory.Shard, error) {
	var out []inventory.Shard
	err := t.rows(ctx, "list sub-rows of "+quoted(sku), yqlListShards, skuParam(sku), func(r query.Row) error {
		s, err := scanShard(r)
		out = append(out, s)
		return err
	})
	return out, err
}

func shardKey(sku string, shard int64) string {
	return rowKey("stock_shards", sku, strconv.FormatInt(shard, 10))
}

func shardWhat(sku string, shard int64) string {
	return fmt.Sprintf("stock sub-row %d of %s", shard, quoted(sku))
}

func shardParam(sku string, shard int64) *paramList {
	return newParams().text("$sku", sku).int("$shard", shard)
}

func shardParams(s inventory.Shard) *paramList {
	return newParams().
		text("$sku", s.SKU).
		int("$shard", s.Shard).
		int("$available", s.Available).
		int("$reserved", s.Reserved).
		int("$sold", s.Sold).
		optTS("$updated_at", s.UpdatedAt).
		int("$version", s.Version)
}

func scanShard(r query.Row) (inventory.Shard, error) {
	var (
		s    inventory.Shard
		upd  *time.Time
		sold *int64
	)
	if err := r.ScanNamed(
		query.Named("sku", &s.SKU),
		query.Named("shard", &s.Shard),
		query.Named("available", &s.Available),
		query.Named("reserved", &s.Reserved),
		query.Named("sold", &sold),
		query.Named("updated_at", &upd),
		query.Named("version", &s.Version),
	); err != nil {
		return inventory.Shard{}, err
	}
	s.Sold = deref(sold)
	s.UpdatedAt = fromTS(upd)
	return s, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// GetReservation implements store.StockRows; NotFound if missing.
func (t *tx) GetReservation(ctx context.Context, id string) (inventory.Reservation, error) {
	var res inventory.Reservation
	err := t.get(ctx, "reservation "+quoted(id), yqlGetReservation, idParam(id), func(r query.Row) (err error) {
		res, err = scanReservation(r)
		return err
	})
	t.sawGet(rowKey("reservations", id), err, res.Version)
	return res, err
}

// InsertReservation implements store.StockRows; Conflict if the id exists.
func (t *tx) InsertReservation(ctx context.Context, r inventory.Reservation) error {
	return t.insert(ctx, rowKey("reservations", r.ID), "reservation "+quoted(r.ID), r.Version, yqlReservationVersion, idParam(r.ID),
		yqlInsertReservation, reservationParams(r))
}

// UpdateReservation implements store.StockRows: it stores r (with r.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateReservation(ctx context.Context, r inventory.Reservation, expectedVersion int64) error {
	return t.updateVersioned(ctx, rowKey("reservations", r.ID), "reservation "+quoted(r.ID), expectedVersion, r.Version,
		yqlReservationVersion, idParam(r.ID), yqlUpsertReservation, reservationParams(r))
}

func skuParam(sku string) *paramList { return newParams().text("$sku", sku) }

func stockParams(s inventory.Stock) *paramList {
	return newParams().
		text("$sku", s.SKU).
		int("$available", s.Available).
		int("$reserved", s.Reserved).
		int("$sold", s.Sold).
		int("$shards", s.Shards).
		optTS("$updated_at", s.UpdatedAt).
		int("$version", s.Version)
}

func reservationParams(r inventory.Reservation) *paramList {
	return newParams().
		text("$id", r.ID).
		text("$order_id", r.OrderID).
		json("$lines", r.Lines).
		optJSON("$takes", r.Takes, len(r.Takes) == 0).
		text("$status", string(r.Status)).
		note("$reason", r.Reason).
		optTS("$created_at", r.CreatedAt).
		optTS("$updated_at", r.UpdatedAt).
		int("$version", r.Version)
}

func scanStock(r query.Row) (inventory.Stock, error) {
	var (
		s      inventory.Stock
		upd    *time.Time
		sold   *int64 // NULL on rows written before migration 0010
		shards *int64 // NULL on rows written before migration 0016
	)
	if err := r.ScanNamed(
		query.Named("sku", &s.SKU),
		query.Named("available", &s.Available),
		query.Named("reserved", &s.Reserved),
		query.Named("sold", &sold),
		query.Named("shards", &shards),
		query.Named("updated_at", &upd),
		query.Named("version", &s.Version),
	); err != nil {
		return inventory.Stock{}, err
	}
	s.Shards = deref(shards)
	s.UpdatedAt = fromTS(upd)
	if sold != nil {
		s.Sold = *sold
	}
	return s, nil
}

func scanReservation(r query.Row) (inventory.Reservation, error) {
	var (
		res           inventory.Reservation
		lines, status string
		takes         *string // NULL: no sub-rows taken
		created, upd  *time.Time
	)
	if err := r.ScanNamed(
		query.Named("id", &res.ID),
		query.Named("order_id", &res.OrderID),
		query.Named("lines", &lines),
		query.Named("takes", &takes),
		query.Named("status", &status),
		query.Named("reason", &res.Reason),
		query.Named("created_at", &created),
		query.Named("updated_at", &upd),
		query.Named("version", &res.Version),
	); err != nil {
		return inventory.Reservation{}, err
	}
	res.Status = inventory.ReservationStatus(status)
	res.CreatedAt, res.UpdatedAt = fromTS(created), fromTS(upd)
	if takes != nil {
		if err := fromJSON(*takes, "reservation takes", &res.Takes); err != nil {
			return inventory.Reservation{}, err
		}
	}
	return res, fromJSON(lines, "reservation lines", &res.Lines)
}
