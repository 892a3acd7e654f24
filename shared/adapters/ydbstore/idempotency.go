package ydbstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/store/bucket"
)

// Table idempotency_keys (schema/ydb/0002_idempotency_keys.sql).

const idemColumns = `scope, idem_key, fingerprint, status, response_status, response_body, location,
	resource_id, locked_until, created_at, expires_at`

const idemDeclares = `
DECLARE $scope AS Utf8;
DECLARE $idem_key AS Utf8;
DECLARE $fingerprint AS Utf8;
DECLARE $status AS Utf8;
DECLARE $response_status AS Int64;
DECLARE $response_body AS Optional<String>;
DECLARE $location AS Utf8;
DECLARE $resource_id AS Utf8;
DECLARE $locked_until AS Optional<Timestamp>;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $expires_at AS Optional<Timestamp>;
DECLARE $bucket AS Int64;
`

const idemValues = `($scope, $idem_key, $fingerprint, $status, $response_status, $response_body,
	$location, $resource_id, $locked_until, $created_at, $expires_at, $bucket)`

// idemWriteColumns are the columns every INSERT and UPSERT writes: all of
// them, with bucket (migration 0013), which no read selects.
const idemWriteColumns = idemColumns + ", bucket"

const idemKeyDeclares = `
DECLARE $scope AS Utf8;
DECLARE $idem_key AS Utf8;
`

const (
	yqlInsertIdem = idemDeclares + `
INSERT INTO idempotency_keys (` + idemWriteColumns + `)
VALUES ` + idemValues + `;`

	// Written after ReplaceIdempotencyKey compared the stored row with prev.
	yqlUpsertIdem = idemDeclares + `
UPSERT INTO idempotency_keys (` + idemWriteColumns + `)
VALUES ` + idemValues + `;`

	yqlGetIdem = idemKeyDeclares + `
SELECT ` + idemColumns + ` FROM idempotency_keys
WHERE scope = $scope AND idem_key = $idem_key;`

	yqlDeleteIdem = idemKeyDeclares + `
DELETE FROM idempotency_keys WHERE scope = $scope AND idem_key = $idem_key;`
)

// Stale: in progress with a lapsed lock, per bucket of
// idx_bucket_status_locked (and the NULL bucket of keys written before
// migration 0013; buckets.go). A NULL lock (the zero time) has lapsed: a
// point prefix (bucket, status, NULL) of its own, read in key order;
// locked_until <= $now is a range without NULL read in index order, so each
// branch reads at most LIMIT rows. The adapter
// orders the union by expiry.
var qListLockLapsedIdem = bucketed(`
DECLARE $in_progress AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
`, []string{
	"SELECT " + idemColumns + " FROM idempotency_keys VIEW idx_bucket_status_locked\n" +
		"WHERE " + bucketCond + " AND status = $in_progress AND locked_until IS NULL\n" +
		"ORDER BY scope, idem_key LIMIT $limit",
	"SELECT " + idemColumns + " FROM idempotency_keys VIEW idx_bucket_status_locked\n" +
		"WHERE " + bucketCond + " AND status = $in_progress AND locked_until <= $now\n" +
		"ORDER BY locked_until, scope, idem_key LIMIT $limit",
})

// InsertIdempotencyKey implements store.IdempotencyRows; Conflict if the key
// exists (even if expired and not yet deleted by the TTL).
func (t *tx) InsertIdempotencyKey(ctx context.Context, r idempotency.Record) error {
	return t.insert(ctx, rowKey("idempotency_keys", r.Scope, r.Key), "idempotency key "+quoted(r.Key), 0, yqlGetIdem, idemKeyParams(r.Scope, r.Key),
		yqlInsertIdem, idemParams(r))
}

// GetIdempotencyKey implements store.IdempotencyRows; NotFound if missing.
// An expired key may still be returned until the TTL deletes it.
func (t *tx) GetIdempotencyKey(ctx context.Context, scope, key string) (idempotency.Record, error) {
	var rec idempotency.Record
	err := t.get(ctx, "idempotency key "+quoted(key), yqlGetIdem, idemKeyParams(scope, key),
		func(r query.Row) (err error) {
			rec, err = scanIdem(r)
			return err
		})
	t.sawGet(rowKey("idempotency_keys", scope, key), err, 0)
	return rec, err
}

// ReplaceIdempotencyKey implements store.IdempotencyRows: it overwrites the key
// only if its stored fingerprint, status and expiry are prev's; Conflict
// otherwise, including when the key no longer exists. Invalid if r and prev
// name different keys.
func (t *tx) ReplaceIdempotencyKey(ctx context.Context, r, prev idempotency.Record) error {
	if r.Scope != prev.Scope || r.Key != prev.Key {
		return apperr.New(apperr.Invalid, "ydbstore: replace idempotency key: record and previous record name different keys")
	}
	what := "idempotency key " + quoted(r.Key)
	var cur idempotency.Record
	found, err := t.row(ctx, "read "+what, yqlGetIdem, idemKeyParams(r.Scope, r.Key),
		func(row query.Row) (err error) {
			cur, err = scanIdem(row)
			return err
		})
	if err != nil {
		return err
	}
	if !found || cur.Fingerprint != prev.Fingerprint || cur.Status != prev.Status ||
		!cur.ExpiresAt.Equal(storedTime(prev.ExpiresAt)) {
		return apperr.New(apperr.Conflict, "%s changed since it was read", what)
	}
	return t.exec(ctx, "replace "+what, yqlUpsertIdem, idemParams(r))
}

// DeleteIdempotencyKey implements store.IdempotencyRows; a missing key is not an error.
func (t *tx) DeleteIdempotencyKey(ctx context.Context, scope, key string) error {
	return t.exec(ctx, "delete idempotency key", yqlDeleteIdem, idemKeyParams(scope, key))
}

// ListStaleIdempotencyKeys implements store.IdempotencyRows: keys in progress
// with a lock lapsed at now, earliest expiry first (a zero expiry first of
// all), then by scope and key. Keys that are only expired are left to the
// table's TTL (schema/ydb/0002_idempotency_keys.sql; storetest
// Features.ExpiryByTTL): the expires_at index was dropped by migration
// 0012. limit <= 0 returns nothing.
func (t *tx) ListStaleIdempotencyKeys(ctx context.Context, now time.Time, limit int) ([]idempotency.Record, error) {
	if limit <= 0 {
		return nil, nil
	}
	seen := make(map[[2]string]bool)
	var out []idempotency.Record
	collect := func(r query.Row) error {
		rec, err := scanIdem(r)
		if err != nil {
			return err
		}
		if k := [2]string{rec.Scope, rec.Key}; !seen[k] {
			seen[k] = true
			out = append(out, rec)
		}
		return nil
	}
	if err := t.rows(ctx, "list abandoned idempotency keys", qListLockLapsedIdem,
		newParams().text("$in_progress", string(idempotency.StatusInProgress)).
			ts("$now", now).uint("$limit", uint64(limit)), collect); err != nil {
		return nil, err
	}
	slices.SortFunc(out, compareStaleIdem)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// compareStaleIdem orders records by (expires_at, scope, key), the zero
// expiry first, as both queries do.
func compareStaleIdem(a, b idempotency.Record) int {
	if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
		return c
	}
	if a.Scope != b.Scope {
		return strings.Compare(a.Scope, b.Scope)
	}
	return strings.Compare(a.Key, b.Key)
}

func idemKeyParams(scope, key string) *paramList {
	return newParams().text("$scope", scope).text("$idem_key", key)
}

// idemParams binds every column of r (idemDeclares).
func idemParams(r idempotency.Record) *paramList {
	return newParams().
		text("$scope", r.Scope).
		text("$idem_key", r.Key).
		text("$fingerprint", r.Fingerprint).
		text("$status", string(r.Status)).
		int("$response_status", int64(r.ResponseStatus)).
		bytes("$response_body", r.ResponseBody).
		text("$location", r.Location).
		text("$resource_id", r.ResourceID).
		optTS("$locked_until", r.LockedUntil).
		optTS("$created_at", r.CreatedAt).
		optTS("$expires_at", r.ExpiresAt).
		int("$bucket", bucket.Of(r.Scope, r.Key))
}

func scanIdem(r query.Row) (idempotency.Record, error) {
	var (
		rec                     idempotency.Record
		status                  string
		respStatus              int64
		locked, created, expire *time.Time
	)
	if err := r.ScanNamed(
		query.Named("scope", &rec.Scope),
		query.Named("idem_key", &rec.Key),
		query.Named("fingerprint", &rec.Fingerprint),
		query.Named("status", &status),
		query.Named("response_status", &respStatus),
		query.Named("response_body", &rec.ResponseBody),
		query.Named("location", &rec.Location),
		query.Named("resource_id", &rec.ResourceID),
		query.Named("locked_until", &locked),
		query.Named("created_at", &created),
		query.Named("expires_at", &expire),
	); err != nil {
		return idempotency.Record{}, err
	}
	rec.Status = idempotency.Status(status)
	rec.ResponseStatus = int(respStatus)
	rec.LockedUntil, rec.CreatedAt, rec.ExpiresAt = fromTS(locked), fromTS(created), fromTS(expire)
	return rec, nil
}
