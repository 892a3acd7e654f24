package sqlitestore

import (
	"context"
	"database/sql"
	"sort"
	"time"

	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
)

// Batched outbox work of the relay (store.OutboxBatch).

const (
	// The next shard >= ? holding a pending row: one index seek (outbox_due
	// leads with (status, shard)). NULL when there is none.
	sqlNextPendingShard = `SELECT MIN(shard) FROM outbox WHERE status = '` + pending + `' AND shard >= ?`

	// Narrow conditional updates by primary key, run once per row inside
	// the caller's transaction with one prepared statement: in SQLite a
	// statement costs no round trip, and this measured cheaper than one
	// statement joining a VALUES list.
	sqlLeaseOutbox = `UPDATE outbox SET lease_owner = ?, lease_until = ?, version = version + 1
	WHERE id = ? AND version = ?`

	sqlMarkOutboxPublished = `UPDATE outbox SET status = ?, published_at = ?, lease_owner = '', lease_until = ?,
	last_error = '', version = version + 1
	WHERE id = ? AND version = ?`
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
	return t.batchVersioned(ctx, "mark outbox events published", sqlMarkOutboxPublished, rows,
		string(outbox.StatusPublished), tm(at), tm(time.Time{}))
}

// batchVersioned runs query once per row: head, then the row's id and
// expected version. It returns how many rows changed.
func (t *tx) batchVersioned(ctx context.Context, what, query string, rows []store.OutboxVersion, head ...any) (int, error) {
	total := 0
	args := append(append([]any(nil), head...), nil, nil)
	for _, r := range rows {
		args[len(head)], args[len(head)+1] = r.ID, r.Version
		n, err := t.exec(ctx, what, query, args...)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
