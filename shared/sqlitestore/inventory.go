package sqlitestore

import (
	"context"

	"ordersaga/shared/inventory"
)

const reservationColumns = `id, order_id, lines, status, reason, created_at, updated_at, version`

const (
	sqlGetStock    = `SELECT sku, available, reserved, sold, updated_at, version FROM stock WHERE sku = ?`
	sqlInsertStock = `INSERT INTO stock (sku, available, reserved, sold, updated_at, version)
	VALUES (?, ?, ?, ?, ?, ?)`
	sqlUpdateStock = `UPDATE stock SET available = ?, reserved = ?, sold = ?, updated_at = ?, version = ?
	WHERE sku = ? AND version = ?`
	sqlStockExists = `SELECT 1 FROM stock WHERE sku = ?`
	sqlListStock   = `SELECT sku, available, reserved, sold, updated_at, version FROM stock ORDER BY sku`

	sqlGetReservation    = `SELECT ` + reservationColumns + ` FROM reservations WHERE id = ?`
	sqlInsertReservation = `INSERT INTO reservations (` + reservationColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateReservation = `UPDATE reservations SET order_id = ?, lines = ?, status = ?, reason = ?,
	created_at = ?, updated_at = ?, version = ?
	WHERE id = ? AND version = ?`
	sqlReservationExists = `SELECT 1 FROM reservations WHERE id = ?`
)

// GetStock implements store.Inventory; NotFound if the SKU has no row.
func (t *tx) GetStock(ctx context.Context, sku string) (inventory.Stock, error) {
	s, err := scanStock(t.queryRowContext(ctx, sqlGetStock, sku))
	if err != nil {
		return inventory.Stock{}, getErr(ctx, err, "stock of "+quoted(sku))
	}
	return s, nil
}

// PutStock implements store.Inventory. expectedVersion 0 inserts (Conflict if
// the SKU exists); otherwise it overwrites the row (storing s.Version as
// given) if its version is expectedVersion: Conflict if not, NotFound if the
// SKU has no row.
func (t *tx) PutStock(ctx context.Context, s inventory.Stock, expectedVersion int64) error {
	if expectedVersion == 0 {
		return t.insert(ctx, "stock of "+quoted(s.SKU), sqlInsertStock,
			s.SKU, s.Available, s.Reserved, s.Sold, tm(s.UpdatedAt), s.Version)
	}
	return t.updateVersioned(ctx, "stock of "+quoted(s.SKU), expectedVersion, sqlUpdateStock,
		[]any{s.Available, s.Reserved, s.Sold, tm(s.UpdatedAt), s.Version, s.SKU, expectedVersion},
		sqlStockExists, s.SKU)
}

// ListStock implements store.Inventory: every SKU, ordered by SKU.
func (t *tx) ListStock(ctx context.Context) ([]inventory.Stock, error) {
	var out []inventory.Stock
	err := t.queryAll(ctx, "list stock", sqlListStock, nil, func(r rowScanner) error {
		s, err := scanStock(r)
		out = append(out, s)
		return err
	})
	return out, err
}

// GetReservation implements store.Inventory; NotFound if missing.
func (t *tx) GetReservation(ctx context.Context, id string) (inventory.Reservation, error) {
	r, err := scanReservation(t.queryRowContext(ctx, sqlGetReservation, id))
	if err != nil {
		return inventory.Reservation{}, getErr(ctx, err, "reservation "+quoted(id))
	}
	return r, nil
}

// InsertReservation implements store.Inventory; Conflict if the id exists.
func (t *tx) InsertReservation(ctx context.Context, r inventory.Reservation) error {
	lines, err := toJSON(r.Lines, "reservation lines")
	if err != nil {
		return err
	}
	return t.insert(ctx, "reservation "+quoted(r.ID), sqlInsertReservation,
		r.ID, r.OrderID, lines, string(r.Status), note(r.Reason), tm(r.CreatedAt), tm(r.UpdatedAt), r.Version)
}

// UpdateReservation implements store.Inventory: it stores r (with r.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateReservation(ctx context.Context, r inventory.Reservation, expectedVersion int64) error {
	lines, err := toJSON(r.Lines, "reservation lines")
	if err != nil {
		return err
	}
	return t.updateVersioned(ctx, "reservation "+quoted(r.ID), expectedVersion, sqlUpdateReservation,
		[]any{r.OrderID, lines, string(r.Status), note(r.Reason), tm(r.CreatedAt), tm(r.UpdatedAt), r.Version,
			r.ID, expectedVersion},
		sqlReservationExists, r.ID)
}

func scanStock(r rowScanner) (inventory.Stock, error) {
	var (
		s   inventory.Stock
		upd int64
	)
	if err := r.Scan(&s.SKU, &s.Available, &s.Reserved, &s.Sold, &upd, &s.Version); err != nil {
		return inventory.Stock{}, err
	}
	s.UpdatedAt = fromTm(upd)
	return s, nil
}

func scanReservation(r rowScanner) (inventory.Reservation, error) {
	var (
		res           inventory.Reservation
		lines, status string
		created, upd  int64
	)
	if err := r.Scan(&res.ID, &res.OrderID, &lines, &status, &res.Reason, &created, &upd, &res.Version); err != nil {
		return inventory.Reservation{}, err
	}
	res.Status = inventory.ReservationStatus(status)
	res.CreatedAt, res.UpdatedAt = fromTm(created), fromTm(upd)
	return res, fromJSON(lines, &res.Lines, "reservation lines")
}
