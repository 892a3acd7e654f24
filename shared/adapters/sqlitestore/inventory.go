package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"ordersaga/shared/domain/inventory"
)

const reservationColumns = `id, order_id, lines, takes, status, reason, created_at, updated_at, version`

const (
	sqlGetStock    = `SELECT sku, available, reserved, sold, shards, updated_at, version FROM stock WHERE sku = ?`
	sqlInsertStock = `INSERT INTO stock (sku, available, reserved, sold, shards, updated_at, version)
	VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateStock = `UPDATE stock SET available = ?, reserved = ?, sold = ?, shards = ?, updated_at = ?, version = ?
	WHERE sku = ? AND version = ?`
	sqlStockExists = `SELECT 1 FROM stock WHERE sku = ?`
	sqlListStock   = `SELECT sku, available, reserved, sold, shards, updated_at, version FROM stock ORDER BY sku`

	sqlGetShard = `SELECT sku, shard, available, reserved, sold, updated_at, version FROM stock_shards
	WHERE sku = ? AND shard = ?`
	sqlInsertShard = `INSERT INTO stock_shards (sku, shard, available, reserved, sold, updated_at, version)
	VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateShard = `UPDATE stock_shards SET available = ?, reserved = ?, sold = ?, updated_at = ?, version = ?
	WHERE sku = ? AND shard = ? AND version = ?`
	sqlShardExists = `SELECT 1 FROM stock_shards WHERE sku = ? AND shard = ?`
	sqlListShards  = `SELECT sku, shard, available, reserved, sold, updated_at, version FROM stock_shards
	WHERE sku = ? ORDER BY shard`

	sqlGetReservation    = `SELECT ` + reservationColumns + ` FROM reservations WHERE id = ?`
	sqlInsertReservation = `INSERT INTO reservations (` + reservationColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateReservation = `UPDATE reservations SET order_id = ?, lines = ?, takes = ?, status = ?, reason = ?,
	created_at = ?, updated_at = ?, version = ?
	WHERE id = ? AND version = ?`
	sqlReservationExists = `SELECT 1 FROM reservations WHERE id = ?`
)

// GetStock implements store.StockRows; NotFound if the SKU has no row.
func (t *tx) GetStock(ctx context.Context, sku string) (inventory.Stock, error) {
	s, err := scanStock(t.queryRowContext(ctx, sqlGetStock, sku))
	if err != nil {
		return inventory.Stock{}, getErr(ctx, err, "stock of "+quoted(sku))
	}
	return s, nil
}

// PutStock implements store.StockRows. expectedVersion 0 inserts (Conflict if
// the SKU exists); otherwise it overwrites the row (storing s.Version as
// given) if its version is expectedVersion: Conflict if not, NotFound if the
// SKU has no row.
func (t *tx) PutStock(ctx context.Context, s inventory.Stock, expectedVersion int64) error {
	if expectedVersion == 0 {
		return t.insert(ctx, "stock of "+quoted(s.SKU), sqlInsertStock,
			s.SKU, s.Available, s.Reserved, s.Sold, s.Shards, tm(s.UpdatedAt), s.Version)
	}
	return t.updateVersioned(ctx, "stock of "+quoted(s.SKU), expectedVersion, sqlUpdateStock,
		[]any{s.Available, s.Reserved, s.Sold, s.Shards, tm(s.UpdatedAt), s.Version, s.SKU, expectedVersion},
		sqlStockExists, s.SKU)
}

// ListStock implements store.StockRows: every SKU, ordered by SKU.
func (t *tx) ListStock(ctx context.Context) ([]inventory.Stock, error) {
	var out []inventory.Stock
	err := t.queryAll(ctx, "list stock", sqlListStock, nil, func(r rowScanner) error {
		s, err := scanStock(r)
		out = append(out, s)
		return err
	})
	return out, err
}

// GetStockShard implements store.StockRows; NotFound if the sub-row is missing.
func (t *tx) GetStockShard(ctx context.Context, sku string, shard int64) (inventory.Shard, error) {
	s, err := scanShard(t.queryRowContext(ctx, sqlGetShard, sku, shard))
	if err != nil {
		return inventory.Shard{}, getErr(ctx, err, shardWhat(sku, shard))
	}
	return s, nil
}

// PutStockShard implements store.StockRows, as PutStock does for a sub-row.
func (t *tx) PutStockShard(ctx context.Context, s inventory.Shard, expectedVersion int64) error {
	what := shardWhat(s.SKU, s.Shard)
	if expectedVersion == 0 {
		return t.insert(ctx, what, sqlInsertShard,
			s.SKU, s.Shard, s.Available, s.Reserved, s.Sold, tm(s.UpdatedAt), s.Version)
	}
	return t.updateVersioned(ctx, what, expectedVersion, sqlUpdateShard,
		[]any{s.Available, s.Reserved, s.Sold, tm(s.UpdatedAt), s.Version, s.SKU, s.Shard, expectedVersion},
		sqlShardExists, s.SKU, s.Shard)
}

// ListStockShards implements store.StockRows: one SKU's sub-rows by shard.
func (t *tx) ListStockShards(ctx context.Context, sku string) ([]inventory.Shard, error) {
	var out []inventory.Shard
	err := t.queryAll(ctx, "list sub-rows of "+quoted(sku), sqlListShards, []any{sku}, func(r rowScanner) error {
		s, err := scanShard(r)
		out = append(out, s)
		return err
	})
	return out, err
}

func shardWhat(sku string, shard int64) string {
	return fmt.Sprintf("stock sub-row %d of %s", shard, quoted(sku))
}

// GetReservation implements store.StockRows; NotFound if missing.
func (t *tx) GetReservation(ctx context.Context, id string) (inventory.Reservation, error) {
	r, err := scanReservation(t.queryRowContext(ctx, sqlGetReservation, id))
	if err != nil {
		return inventory.Reservation{}, getErr(ctx, err, "reservation "+quoted(id))
	}
	return r, nil
}

// InsertReservation implements store.StockRows; Conflict if the id exists.
func (t *tx) InsertReservation(ctx context.Context, r inventory.Reservation) error {
	lines, err := toJSON(r.Lines, "reservation lines")
	if err != nil {
		return err
	}
	takes, err := takesColumn(r.Takes)
	if err != nil {
		return err
	}
	return t.insert(ctx, "reservation "+quoted(r.ID), sqlInsertReservation,
		r.ID, r.OrderID, lines, takes, string(r.Status), note(r.Reason), tm(r.CreatedAt), tm(r.UpdatedAt), r.Version)
}

// UpdateReservation implements store.StockRows: it stores r (with r.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateReservation(ctx context.Context, r inventory.Reservation, expectedVersion int64) error {
	lines, err := toJSON(r.Lines, "reservation lines")
	if err != nil {
		return err
	}
	takes, err := takesColumn(r.Takes)
	if err != nil {
		return err
	}
	return t.updateVersioned(ctx, "reservation "+quoted(r.ID), expectedVersion, sqlUpdateReservation,
		[]any{r.OrderID, lines, takes, string(r.Status), note(r.Reason), tm(r.CreatedAt), tm(r.UpdatedAt), r.Version,
			r.ID, expectedVersion},
		sqlReservationExists, r.ID)
}

func scanStock(r rowScanner) (inventory.Stock, error) {
	var (
		s   inventory.Stock
		upd int64
	)
	if err := r.Scan(&s.SKU, &s.Available, &s.Reserved, &s.Sold, &s.Shards, &upd, &s.Version); err != nil {
		return inventory.Stock{}, err
	}
	s.UpdatedAt = fromTm(upd)
	return s, nil
}

func scanShard(r rowScanner) (inventory.Shard, error) {
	var (
		s   inventory.Shard
		upd int64
	)
	if err := r.Scan(&s.SKU, &s.Shard, &s.Available, &s.Reserved, &s.Sold, &upd, &s.Version); err != nil {
		return inventory.Shard{}, err
	}
	s.UpdatedAt = fromTm(upd)
	return s, nil
}

// takesColumn encodes a reservation's takes: NULL when there are none.
func takesColumn(takes []inventory.Take) (any, error) {
	if len(takes) == 0 {
		return nil, nil
	}
	return toJSON(takes, "reservation takes")
}

func scanReservation(r rowScanner) (inventory.Reservation, error) {
	var (
		res           inventory.Reservation
		lines, status string
		takes         sql.NullString
		created, upd  int64
	)
	if err := r.Scan(&res.ID, &res.OrderID, &lines, &takes, &status, &res.Reason, &created, &upd, &res.Version); err != nil {
		return inventory.Reservation{}, err
	}
	res.Status = inventory.ReservationStatus(status)
	res.CreatedAt, res.UpdatedAt = fromTm(created), fromTm(upd)
	if takes.Valid {
		if err := fromJSON(takes.String, &res.Takes, "reservation takes"); err != nil {
			return inventory.Reservation{}, err
		}
	}
	return res, fromJSON(lines, &res.Lines, "reservation lines")
}
