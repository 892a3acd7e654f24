package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/apperr"
	"ordersaga/shared/dlq"
)

// Table dead_letters (schema/ydb/0008_dead_letters.sql); the audit table is
// in audit.go. Row encoding and the page cursor are in deadletters_codec.go.

const deadLetterColumns = "id, `source`, source_ref, `queue`, payload, attrs, error_type, `error`, " +
	"retry_count, first_failed_at, last_failed_at, history, status, redrive_count, flagged, " +
	"resolved_at, resolved_by, idempotency_key, order_id, outbox_event_id, saga_id, created_at, " +
	"updated_at, version"

const deadLetterDeclares = `
DECLARE $id AS Utf8;
DECLARE $col_source AS Utf8;
DECLARE $source_ref AS Utf8;
DECLARE $col_queue AS Utf8;
DECLARE $payload AS Optional<String>;
DECLARE $attrs AS Json;
DECLARE $error_type AS Utf8;
DECLARE $col_error AS Utf8;
DECLARE $retry_count AS Int64;
DECLARE $first_failed_at AS Optional<Timestamp>;
DECLARE $last_failed_at AS Optional<Timestamp>;
DECLARE $history AS Json;
DECLARE $status AS Utf8;
DECLARE $redrive_count AS Int64;
DECLARE $flagged AS Bool;
DECLARE $resolved_at AS Optional<Timestamp>;
DECLARE $resolved_by AS Utf8;
DECLARE $idempotency_key AS Utf8;
DECLARE $order_id AS Utf8;
DECLARE $outbox_event_id AS Utf8;
DECLARE $saga_id AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
`

const deadLetterValues = `($id, $col_source, $source_ref, $col_queue, $payload, $attrs, $error_type,
	$col_error, $retry_count, $first_failed_at, $last_failed_at, $history, $status, $redrive_count,
	$flagged, $resolved_at, $resolved_by, $idempotency_key, $order_id, $outbox_event_id, $saga_id,
	$created_at, $updated_at, $version)`

// deadLetterFilter is the WHERE clause shared by both list queries (after
// their status condition). Every filter is an Optional parameter, NULL
// meaning "no filter". A NULL (zero) last_failed_at is the earliest time:
// it fails a From bound, passes a To bound, and sorts last (newest first).
// The cursor ($after_at, $after_id) continues after that entry in
// (last_failed_at desc, id desc) order.
const deadLetterFilter = "\n\tAND ($col_source IS NULL OR `source` = $col_source)" + `
	AND ($error_type IS NULL OR error_type = $error_type)
	AND ($order_id IS NULL OR order_id = $order_id)
	AND ($saga_id IS NULL OR saga_id = $saga_id)
	AND ($from IS NULL OR last_failed_at >= $from)
	AND ($to IS NULL OR last_failed_at IS NULL OR last_failed_at < $to)
	AND ($flagged IS NULL OR flagged = $flagged)
	AND ($after_id IS NULL
		OR ($after_at IS NULL AND last_failed_at IS NULL AND id < $after_id)
		OR ($after_at IS NOT NULL AND (last_failed_at IS NULL OR last_failed_at < $after_at
			OR (last_failed_at = $after_at AND id < $after_id))))
ORDER BY (last_failed_at IS NOT NULL) DESC, last_failed_at DESC, id DESC
LIMIT $limit;`

const deadLetterFilterDeclares = `
DECLARE $col_source AS Optional<Utf8>;
DECLARE $error_type AS Optional<Utf8>;
DECLARE $order_id AS Optional<Utf8>;
DECLARE $saga_id AS Optional<Utf8>;
DECLARE $from AS Optional<Timestamp>;
DECLARE $to AS Optional<Timestamp>;
DECLARE $flagged AS Optional<Bool>;
DECLARE $after_at AS Optional<Timestamp>;
DECLARE $after_id AS Optional<Utf8>;
DECLARE $limit AS Uint64;
`

const (
	yqlInsertDeadLetter = deadLetterDeclares + `
INSERT INTO dead_letters (` + deadLetterColumns + `)
VALUES ` + deadLetterValues + `;`

	yqlUpsertDeadLetter = deadLetterDeclares + `
UPSERT INTO dead_letters (` + deadLetterColumns + `)
VALUES ` + deadLetterValues + `;`

	yqlGetDeadLetter = `
DECLARE $id AS Utf8;
SELECT ` + deadLetterColumns + ` FROM dead_letters WHERE id = $id;`

	yqlDeadLetterVersion = `
DECLARE $id AS Utf8;
SELECT version FROM dead_letters WHERE id = $id;`

	// The newest entry (by created_at, NULL oldest, then id) for a source ref.
	yqlFindDeadLetter = `
DECLARE $col_source AS Utf8;
DECLARE $source_ref AS Utf8;
SELECT ` + deadLetterColumns + ` FROM dead_letters VIEW idx_source_ref
WHERE ` + "`source`" + ` = $col_source AND source_ref = $source_ref
ORDER BY (created_at IS NOT NULL) DESC, created_at DESC, id DESC
LIMIT 1;`

	yqlDeleteDeadLetter = `
DECLARE $id AS Utf8;
DELETE FROM dead_letters WHERE id = $id;`

	// ListDeadLetters with a status filter: reads one status of the index.
	yqlListDeadLettersByStatus = `
DECLARE $status AS Utf8;` + deadLetterFilterDeclares + `
SELECT ` + deadLetterColumns + ` FROM dead_letters VIEW idx_status_last_failed
WHERE status = $status` + deadLetterFilter

	// ListDeadLetters without a status filter: a scan of the (small) table.
	yqlListDeadLetters = deadLetterFilterDeclares + `
SELECT ` + deadLetterColumns + ` FROM dead_letters
WHERE TRUE` + deadLetterFilter
)

// Page sizes of ListDeadLetters (as in sqlitestore).
const (
	defaultPageLimit = 50
	maxPageLimit     = 1000
)

// InsertDeadLetter implements store.DeadLetters; Conflict if the id exists.
func (t *tx) InsertDeadLetter(ctx context.Context, d dlq.DeadLetter) error {
	return t.insert(ctx, rowKey("dead_letters", d.ID), "dead letter "+quoted(d.ID), d.Version, yqlDeadLetterVersion, idParam(d.ID),
		yqlInsertDeadLetter, deadLetterParams(d))
}

// GetDeadLetter implements store.DeadLetters; NotFound if missing.
func (t *tx) GetDeadLetter(ctx context.Context, id string) (dlq.DeadLetter, error) {
	var d dlq.DeadLetter
	err := t.get(ctx, "dead letter "+quoted(id), yqlGetDeadLetter, idParam(id), func(r query.Row) (err error) {
		d, err = scanDeadLetter(r)
		return err
	})
	t.sawGet(rowKey("dead_letters", id), err, d.Version)
	return d, err
}

// FindDeadLetter implements store.DeadLetters: the newest (by CreatedAt, then
// ID) entry with this source and ref; NotFound if none.
func (t *tx) FindDeadLetter(ctx context.Context, src dlq.Source, ref string) (dlq.DeadLetter, error) {
	var d dlq.DeadLetter
	err := t.get(ctx, "dead letter for "+string(src)+" "+quoted(ref), yqlFindDeadLetter,
		newParams().text("$col_source", string(src)).text("$source_ref", ref),
		func(r query.Row) (err error) {
			d, err = scanDeadLetter(r)
			return err
		})
	return d, err
}

// UpdateDeadLetter implements store.DeadLetters: it stores d (with d.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateDeadLetter(ctx context.Context, d dlq.DeadLetter, expectedVersion int64) error {
	return t.updateVersioned(ctx, rowKey("dead_letters", d.ID), "dead letter "+quoted(d.ID), expectedVersion, d.Version,
		yqlDeadLetterVersion, idParam(d.ID), yqlUpsertDeadLetter, deadLetterParams(d))
}

// DeleteDeadLetter implements store.DeadLetters; deleting a missing entry is
// not an error.
func (t *tx) DeleteDeadLetter(ctx context.Context, id string) error {
	return t.exec(ctx, "delete dead letter", yqlDeleteDeadLetter, idParam(id))
}

// ListDeadLetters implements store.DeadLetters with keyset pagination on
// (last_failed_at desc, id desc). p.Limit <= 0 means 50, and it is capped at
// 1000. The cursor is opaque (the same format as sqlitestore's); a malformed
// cursor is Invalid.
func (t *tx) ListDeadLetters(ctx context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	limit = min(limit, maxPageLimit)
	yql, ps, err := deadLetterListQuery(f, p.Cursor, limit+1) // one extra row: is there a next page?
	if err != nil {
		return nil, "", err
	}
	var out []dlq.DeadLetter
	err = t.rows(ctx, "list dead letters", yql, ps, func(r query.Row) error {
		d, err := scanDeadLetter(r)
		out = append(out, d)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, encodeCursor(last.LastFailedAt, last.ID), nil
}

// deadLetterListQuery picks the list query for f and binds its parameters.
func deadLetterListQuery(f dlq.Filter, cursor string, limit int) (string, *paramList, error) {
	yql, ps := yqlListDeadLetters, newParams()
	if f.Status != "" {
		yql = yqlListDeadLettersByStatus
		ps.text("$status", string(f.Status))
	}
	ps.optText("$col_source", string(f.Source)).
		optText("$error_type", f.ErrorType).
		optText("$order_id", f.OrderID).
		optText("$saga_id", f.SagaID).
		optTS("$from", f.From).
		optTS("$to", f.To).
		optBool("$flagged", f.Flagged)
	if cursor == "" {
		ps.optTS("$after_at", time.Time{}).optText("$after_id", "")
	} else {
		at, id, err := decodeCursor(cursor)
		if err != nil {
			return "", nil, err
		}
		ps.check("$after_id", id)
		ps.optTS("$after_at", at).add("$after_id", optionalText(id))
	}
	ps.uint("$limit", uint64(limit))
	if ps.err != nil {
		return "", nil, apperr.Wrap(apperr.Invalid, ps.err, "ydbstore: list dead letters")
	}
	return yql, ps, nil
}
