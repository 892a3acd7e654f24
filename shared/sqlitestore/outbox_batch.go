package sqlitestore

import (
	"context"
	"strings"
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
	ORDER BY created_at, id LIMIT ?`

	// The %s slot is a "(?, ?), ..." list of (id, expected version); rows
	// are found by primary key and changed only at their expected version.
	sqlLeaseOutbox = `WITH v(id, version) AS (VALUES %s)
	UPDATE outbox SET lease_owner = ?, lease_until = ?, version = version + 1
	WHERE id IN (SELECT id FROM v) AND version = (SELECT v.version FROM v WHERE v.id = outbox.id)`

	sqlMarkOutboxPublished = `WITH v(id, version) AS (VALUES %s)
	UPDATE outbox SET status = ?, published_at = ?, lease_owner = '', lease_until = ?, last_error = '',
	version = version + 1
	WHERE id IN (SELECT id FROM v) AND version = (SELECT v.version FROM v WHERE v.id = outbox.id)`
)

// maxBatchRows bounds the rows bound into one batched statement.
const maxBatchRows = 250

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

// batchVersioned runs template over rows, maxBatchRows at a time: the
// (id, version) pairs first, then tail.
func (t *tx) batchVersioned(ctx context.Context, what, template string, rows []store.OutboxVersion, tail ...any) (int, error) {
	total := 0
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), maxBatchRows)]
		rows = rows[len(chunk):]
		args := make([]any, 0, 2*len(chunk)+len(tail))
		for _, r := range chunk {
			args = append(args, r.ID, r.Version)
		}
		args = append(args, tail...)
		pairs := strings.TrimSuffix(strings.Repeat("(?, ?), ", len(chunk)), ", ")
		n, err := t.exec(ctx, what, sprintfSQL(template, pairs), args...)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
