package sqlitestore

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// Batched outbox work of the relay (store.OutboxBatch).

const (
	// The next shard >= ? holding a pending row: one index seek (outbox_due
	// leads with (status, shard)). NULL when there is none.
	sqlNextPendingShard = `SELECT MIN(shard) FROM outbox WHERE status = '` + pending + `' AND shard >= ?`

	// Narrow conditional updates of a batch of rows by primary key, one
	// statement per batch: the target rows are joined with a VALUES list of
	// (id, expected version) pairs (UPDATE ... FROM, SQLite >= 3.33), which
	// SQLite runs as one scan of the list and one primary-key seek per pair.
	// One statement per row cost about twice as much per row: the driver
	// compiles every statement's SQL on every execution (stmtcache.go). %s
	// is the VALUES list (versionedValues).
	//
	// OR FAIL: a statement that may change many rows and abort half-way
	// (the default ABORT backs its own changes out) copies every page it
	// touches into a statement journal first; with FAIL a failing statement
	// keeps its earlier changes (sqlite.org/lang_conflict.html), so SQLite
	// needs no statement journal. That cut the relay's store time per event
	// by about a fifth (scripts/bench, 6000 events). It changes nothing
	// visible: an error fails the caller's fn, and InTx then rolls back its
	// transaction, or its savepoint in a group (group.go). The statements set
	// only non-NULL values of the columns' types, so no constraint can fail.
	sqlLeaseOutbox = `UPDATE OR FAIL outbox SET lease_owner = ?, lease_until = ?, version = outbox.version + 1
	FROM (VALUES %s) AS v WHERE outbox.id = v.column1 AND outbox.version = v.column2`

	sqlMarkOutboxPublished = `UPDATE OR FAIL outbox SET status = ?, published_at = ?, lease_owner = '', lease_until = ?,
	last_error = '', version = outbox.version + 1
	FROM (VALUES %s) AS v WHERE outbox.id = v.column1 AND outbox.version = v.column2`
)

// ListOutboxDueFrom implements store.OutboxBatch. limit <= 0 returns nothing.
//
// One ordered range read per shard that holds pending rows, merged: a single
// query over "shard >= ?" cannot use the index's (next_attempt_at, id) order
// across shards and sorted the whole backlog on every claim (the relay's
// claim always takes this path for its last shard, so with the default one
// shard on every claim). The shards are found by index seeks
// (sqlNextPendingShard), so the cost is one seek per shard in use plus up to
// limit rows per shard, whatever the backlog.
func (t *tx) ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []outbox.Event
	shards := 0
	for shard := fromShard; ; shard++ {
		var next sql.NullInt64
		if err := t.queryRowContext(ctx, sqlNextPendingShard, shard).Scan(&next); err != nil {
			return nil, classify(ctx, err, "sqlitestore: list due outbox events")
		}
		if !next.Valid {
			break
		}
		shard = int(next.Int64)
		due, err := t.ListOutboxDue(ctx, shard, now, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, due...)
		shards++
	}
	if shards > 1 {
		// The order of ListOutboxDue: stored microseconds, then id bytes.
		sort.Slice(out, func(i, j int) bool {
			a, b := tm(out[i].NextAttemptAt), tm(out[j].NextAttemptAt)
			return a < b || a == b && out[i].ID < out[j].ID
		})
	}
	return out[:min(len(out), limit)], nil
}

// LeaseOutbox implements store.OutboxBatch.
func (t *tx) LeaseOutbox(ctx context.Context, rows []store.OutboxVersion, owner string, until time.Time) (int, error) {
	return t.batchVersioned(ctx, "lease outbox events", sqlLeaseOutbox, rows, owner, tm(until))
}

// MarkOutboxPublished implements store.OutboxBatch.
func (t *tx) MarkOutboxPublished(ctx context.Context, rows []store.OutboxVersion, at time.Time) (int, error) {
	n, err := t.batchVersioned(ctx, "mark outbox events published", sqlMarkOutboxPublished, rows,
		string(outbox.StatusPublished), tm(at), tm(time.Time{}))
	if err != nil || n == 0 {
		return n, err
	}
	// The published rows stopped blocking: their aggregates' next blocking
	// rows become the heads.
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return n, t.promoteHeadsOfRows(ctx, ids)
}

// maxVersionedRows bounds the (id, version) pairs of one batched statement:
// 2·256 variables and the head's stay below 999, the lowest variable limit
// any SQLite build has had (SQLITE_MAX_VARIABLE_NUMBER before 3.32; since
// then 32766, https://www.sqlite.org/limits.html#max_variable_number).
const maxVersionedRows = 256

// batchVersioned runs query (a template whose %s is the VALUES list) on
// rows, at most maxVersionedRows per statement, binding head and then each
// row's id and expected version. It returns how many rows changed.
//
// A statement's pairs are padded with (NULL, NULL), which match no row, to
// the next power of two: the statement cache then holds at most nine texts
// per query instead of one per batch length.
func (t *tx) batchVersioned(ctx context.Context, what, query string, rows []store.OutboxVersion, head ...any) (int, error) {
	total := 0
	for len(rows) > 0 {
		part := rows[:min(len(rows), maxVersionedRows)]
		rows = rows[len(part):]
		n := paddedLen(len(part))
		args := make([]any, 0, len(head)+2*n)
		args = append(args, head...)
		for _, r := range part {
			args = append(args, r.ID, r.Version)
		}
		for range n - len(part) {
			args = append(args, nil, nil)
		}
		changed, err := t.exec(ctx, what, sprintfSQL(query, versionedValues(n)), args...)
		if err != nil {
			return total, err
		}
		total += changed
	}
	return total, nil
}

// paddedLen is the smallest power of two >= n (n >= 1).
func paddedLen(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// versionedValues is the VALUES list of n (id, version) pairs: "(?, ?), ...".
func versionedValues(n int) string {
	return strings.TrimSuffix(strings.Repeat("(?, ?), ", n), ", ")
}
