package sqlitestore

import (
	"context"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
)

const idemColumns = `scope, idem_key, fingerprint, status, response_status, response_body, location,
	resource_id, locked_until, created_at, expires_at`

const (
	// bucket: the YDB twin's column (schema/sqlite/0011_buckets.sql), a
	// function of the key, so the takeover UPDATE never changes it.
	sqlInsertIdem = `INSERT INTO idempotency_keys (` + idemColumns + `, bucket)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlClaimIdem = `INSERT INTO idempotency_keys (` + idemColumns + `, bucket)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, idem_key) DO NOTHING`
	sqlGetIdem = `SELECT ` + idemColumns + ` FROM idempotency_keys WHERE scope = ? AND idem_key = ?`
	// The takeover matches the previous record's fingerprint, status and
	// expiry exactly, so two callers taking over the same key cannot both win.
	sqlReplaceIdem = `UPDATE idempotency_keys SET fingerprint = ?, status = ?, response_status = ?,
	response_body = ?, location = ?, resource_id = ?, locked_until = ?, created_at = ?, expires_at = ?
	WHERE scope = ? AND idem_key = ? AND fingerprint = ? AND status = ? AND expires_at = ?`
	sqlDeleteIdem = `DELETE FROM idempotency_keys WHERE scope = ? AND idem_key = ?`
	// Stale: expired (a zero expiry never expires), or in progress with a
	// lock that lapsed (a zero lock has lapsed). Same rules as idempotency.Decide.
	sqlListStaleIdem = `SELECT ` + idemColumns + ` FROM idempotency_keys
	WHERE (expires_at <= ? AND expires_at <> ?) OR (status = '` + string(idempotency.StatusInProgress) + `' AND locked_until <= ?)
	ORDER BY expires_at, scope, idem_key LIMIT ?`
)

// InsertIdempotencyKey implements store.IdempotencyRows; Conflict if the key exists.
func (t *tx) InsertIdempotencyKey(ctx context.Context, r idempotency.Record) error {
	return t.insert(ctx, "idempotency key "+quoted(r.Key), sqlInsertIdem,
		r.Scope, r.Key, r.Fingerprint, string(r.Status), r.ResponseStatus, r.ResponseBody, r.Location,
		r.ResourceID, tm(r.LockedUntil), tm(r.CreatedAt), tm(r.ExpiresAt), bucket.Of(r.Scope, r.Key))
}

var _ store.KeyClaimer = (*tx)(nil)

// ClaimIdempotencyKey implements store.KeyClaimer.
func (t *tx) ClaimIdempotencyKey(ctx context.Context, r idempotency.Record) (bool, error) {
	n, err := t.exec(ctx, "claim idempotency key "+quoted(r.Key), sqlClaimIdem,
		r.Scope, r.Key, r.Fingerprint, string(r.Status), r.ResponseStatus, r.ResponseBody, r.Location,
		r.ResourceID, tm(r.LockedUntil), tm(r.CreatedAt), tm(r.ExpiresAt), bucket.Of(r.Scope, r.Key))
	return n > 0, err
}

// GetIdempotencyKey implements store.IdempotencyRows; NotFound if missing.
func (t *tx) GetIdempotencyKey(ctx context.Context, scope, key string) (idempotency.Record, error) {
	r, err := scanIdem(t.queryRowContext(ctx, sqlGetIdem, scope, key))
	if err != nil {
		return idempotency.Record{}, getErr(ctx, err, "idempotency key "+quoted(key))
	}
	return r, nil
}

// ReplaceIdempotencyKey implements store.IdempotencyRows: it overwrites the key
// (r.Scope, r.Key) only if its stored fingerprint, status and expiry are
// prev's; Conflict otherwise, including when the key no longer exists.
// Invalid if r and prev name different keys.
func (t *tx) ReplaceIdempotencyKey(ctx context.Context, r, prev idempotency.Record) error {
	if r.Scope != prev.Scope || r.Key != prev.Key {
		return apperr.New(apperr.Invalid, "sqlitestore: replace idempotency key: record and previous record name different keys")
	}
	n, err := t.exec(ctx, "replace idempotency key", sqlReplaceIdem,
		r.Fingerprint, string(r.Status), r.ResponseStatus, r.ResponseBody, r.Location, r.ResourceID,
		tm(r.LockedUntil), tm(r.CreatedAt), tm(r.ExpiresAt),
		r.Scope, r.Key, prev.Fingerprint, string(prev.Status), tm(prev.ExpiresAt))
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.Conflict, "idempotency key %s changed since it was read", quoted(r.Key))
	}
	return nil
}

// DeleteIdempotencyKey implements store.IdempotencyRows; a missing key is not an error.
func (t *tx) DeleteIdempotencyKey(ctx context.Context, scope, key string) error {
	_, err := t.exec(ctx, "delete idempotency key", sqlDeleteIdem, scope, key)
	return err
}

// ListStaleIdempotencyKeys implements store.IdempotencyRows, earliest expiry
// first. limit <= 0 returns nothing.
func (t *tx) ListStaleIdempotencyKeys(ctx context.Context, now time.Time, limit int) ([]idempotency.Record, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []idempotency.Record
	err := t.queryAll(ctx, "list stale idempotency keys", sqlListStaleIdem,
		[]any{tm(now), zeroMicros, tm(now), limit},
		func(r rowScanner) error {
			rec, err := scanIdem(r)
			out = append(out, rec)
			return err
		})
	return out, err
}

func scanIdem(r rowScanner) (idempotency.Record, error) {
	var (
		rec                     idempotency.Record
		status                  string
		locked, created, expire int64
	)
	if err := r.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &status, &rec.ResponseStatus,
		&rec.ResponseBody, &rec.Location, &rec.ResourceID, &locked, &created, &expire); err != nil {
		return idempotency.Record{}, err
	}
	rec.Status = idempotency.Status(status)
	rec.LockedUntil, rec.CreatedAt, rec.ExpiresAt = fromTm(locked), fromTm(created), fromTm(expire)
	return rec, nil
}
