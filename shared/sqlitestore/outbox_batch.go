package sqlitestore

import (
	"context"
	"time"

	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
)

// Batched outbox work of the relay (store.OutboxBatch).

const (
	// Like sqlListOutboxDue over shard >= ? (index outbox_due: a range of
	// its (status, shard) prefix).
	sqlListOutboxDueFrom = `SELECT ` + outboxColumns + ` FROM outbox
	WHERE status = ? AND shard >= ? AND next_attempt_at <= ? AND lease_until <= ?
	ORDER BY next_attempt_at, id LIMIT ?`

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
func (t *tx) ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []outbox.Event
	err := t.queryAll(ctx, "list due outbox events", sqlListOutboxDueFrom,
		[]any{string(outbox.StatusPending), fromShard, tm(now), tm(now), limit},
		func(r rowScanner) error {
			e, err := scanOutbox(r)
			out = append(out, e)
			return err
		})
	return out, err
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
