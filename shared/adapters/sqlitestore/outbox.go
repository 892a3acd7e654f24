package sqlitestore

import (
	"context"
	"time"

	"ordersaga/shared/domain/outbox"
)

const outboxColumns = `id, shard, aggregate_type, aggregate_id, event_type, destination, payload,
	metadata, status, attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at,
	published_at, version`

// The statuses the partial indexes of migration 0012 are defined on; a
// query must name them literally (not as a parameter) for SQLite to use a
// partial index (sqlite.org/partialindex.html, "Queries Using Partial
// Indexes").
const (
	pending   = string(outbox.StatusPending)
	published = string(outbox.StatusPublished)
	// openStatus is the condition of the partial index
	// outbox_open_by_aggregate (migration 0013), written as the index has
	// it so that SQLite can use the index.
	openStatus = `status IN ('` + pending + `', '` + string(outbox.StatusDead) + `')`
)

const (
	// The order of an aggregate's rows is their rowid's (EarliestPending):
	// the single writer gives each new row the largest rowid yet, so rowids
	// follow the order of the writes — within a transaction and across
	// them — whatever the writers' clocks say. (A deleted newest row's
	// rowid can be given again, still above every row left.) aggregate_seq
	// (migration 0010), which numbered the rows with a look-up compiled on
	// every insert, is no longer written; the old rows' rowids were in the
	// same order as their numbers.
	//
	// head (migration 0015, outbox_head.go): the new row is its
	// aggregate's head when no blocking row of the aggregate exists yet, a
	// read of outbox_open_by_aggregate (the aggregate's open rows, few).
	sqlInsertOutbox = `INSERT INTO outbox (` + outboxColumns + `, head)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		NOT EXISTS (SELECT 1 FROM outbox WHERE aggregate_id = ? AND ` + blockingRow + `))`
	sqlGetOutbox    = `SELECT ` + outboxColumns + ` FROM outbox WHERE id = ?`
	sqlUpdateOutbox = `UPDATE outbox SET shard = ?, aggregate_type = ?, aggregate_id = ?,
	event_type = ?, destination = ?, payload = ?, metadata = ?, status = ?, attempts = ?,
	next_attempt_at = ?, lease_owner = ?, lease_until = ?, last_error = ?, created_at = ?,
	published_at = ?, version = ?
	WHERE id = ? AND version = ?`
	sqlOutboxExists = `SELECT 1 FROM outbox WHERE id = ?`
	// Pending heads (outbox_head.go), due and lease free (lease_until <=
	// now), earliest next attempt first, then id (the order YDB's index
	// gives it): the partial index outbox_head_due, whose condition the
	// query names literally. Rows behind their aggregate's head are not in
	// it, however many there are.
	sqlListOutboxDue = `SELECT ` + outboxColumns + ` FROM outbox
	WHERE status = '` + pending + `' AND head = 1 AND shard = ? AND next_attempt_at <= ? AND lease_until <= ?
	ORDER BY next_attempt_at, id LIMIT ?`
	// The first blocking row of each aggregate (pending, or dead and bound
	// for order-events): the one with the smallest rowid (see
	// sqlInsertOutbox). With MIN, SQLite takes the bare column id from the
	// row holding the minimum (sqlite.org/lang_select.html, "bare columns in
	// an aggregate query"). The IN list is filled in by EarliestPending.
	sqlEarliestPending = `SELECT aggregate_id, id, MIN(rowid) FROM outbox
	WHERE ` + openStatus + ` AND (status = ? OR (status = ? AND destination = ?))
	AND aggregate_id IN (%s) GROUP BY aggregate_id`
	sqlOutboxBacklogCount = `SELECT COUNT(*) FROM outbox WHERE status = '` + pending + `'`
	// Reads the pending rows through outbox_due (O(backlog)); the hint
	// keeps SQLite from preferring another index that covers created_at.
	sqlOutboxBacklogOldest = `SELECT MIN(created_at) FROM outbox INDEXED BY outbox_due
	WHERE status = '` + pending + `'`
	sqlDeletePublished = `DELETE FROM outbox WHERE id IN (
		SELECT id FROM outbox WHERE status = '` + published + `' AND published_at < ?
		ORDER BY published_at, id LIMIT ?)`
)

// maxInList bounds the ids bound into one IN list (SQLite's default
// variable limit is far higher; this keeps statements small).
const maxInList = 500

// InsertOutbox implements store.OutboxRows; Conflict if the id exists.
func (t *tx) InsertOutbox(ctx context.Context, e outbox.Event) error {
	meta, err := toJSON(e.Metadata, "outbox metadata")
	if err != nil {
		return err
	}
	return t.insert(ctx, "outbox event "+quoted(e.ID), sqlInsertOutbox,
		e.ID, e.Shard, e.AggregateType, e.AggregateID, e.EventType, e.Destination, e.Payload, meta,
		string(e.Status), e.Attempts, tm(e.NextAttemptAt), e.LeaseOwner, tm(e.LeaseUntil), note(e.LastError),
		tm(e.CreatedAt), tm(e.PublishedAt), e.Version, e.AggregateID)
}

// GetOutbox implements store.OutboxRows; NotFound if missing.
func (t *tx) GetOutbox(ctx context.Context, id string) (outbox.Event, error) {
	e, err := scanOutbox(t.queryRowContext(ctx, sqlGetOutbox, id))
	if err != nil {
		return outbox.Event{}, getErr(ctx, err, "outbox event "+quoted(id))
	}
	return e, nil
}

// UpdateOutbox implements store.OutboxRows: it stores e (with e.Version as given)
// if the stored version is expectedVersion; Conflict if not, NotFound if missing.
func (t *tx) UpdateOutbox(ctx context.Context, e outbox.Event, expectedVersion int64) error {
	meta, err := toJSON(e.Metadata, "outbox metadata")
	if err != nil {
		return err
	}
	err = t.updateVersioned(ctx, "outbox event "+quoted(e.ID), expectedVersion, sqlUpdateOutbox,
		[]any{e.Shard, e.AggregateType, e.AggregateID, e.EventType, e.Destination, e.Payload, meta,
			string(e.Status), e.Attempts, tm(e.NextAttemptAt), e.LeaseOwner, tm(e.LeaseUntil),
			note(e.LastError), tm(e.CreatedAt), tm(e.PublishedAt), e.Version, e.ID, expectedVersion},
		sqlOutboxExists, e.ID)
	if err != nil {
		return err
	}
	// The row may have stopped blocking (its aggregate's next blocking row
	// becomes the head) or started again (a redrive: it may be first).
	return t.promoteHeads(ctx, e.AggregateID)
}

// ListOutboxDue implements store.OutboxRows. limit <= 0 returns nothing.
func (t *tx) ListOutboxDue(ctx context.Context, shard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []outbox.Event
	err := t.queryAll(ctx, "list due outbox events", sqlListOutboxDue,
		[]any{shard, tm(now), tm(now), limit},
		func(r rowScanner) error {
			e, err := scanOutbox(r)
			out = append(out, e)
			return err
		})
	return out, err
}

// EarliestPending implements store.OutboxRows, querying at most maxInList ids at
// a time. Aggregates without pending rows are absent from the map.
func (t *tx) EarliestPending(ctx context.Context, aggregateIDs []string) (map[string]string, error) {
	out := make(map[string]string)
	for len(aggregateIDs) > 0 {
		chunk := aggregateIDs[:min(len(aggregateIDs), maxInList)]
		aggregateIDs = aggregateIDs[len(chunk):]
		args := make([]any, 0, len(chunk)+3)
		args = append(args, string(outbox.StatusPending), string(outbox.StatusDead), outbox.DestOrderEvents)
		for _, id := range chunk {
			args = append(args, id)
		}
		err := t.queryAll(ctx, "earliest pending outbox events",
			sprintfSQL(sqlEarliestPending, placeholders(len(chunk))), args,
			func(r rowScanner) error {
				var agg, id string
				var first int64
				err := r.Scan(&agg, &id, &first)
				out[agg] = id
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OutboxBacklog implements store.OutboxRows: the pending count and the CreatedAt
// of the oldest pending row (zero when none is pending).
func (t *tx) OutboxBacklog(ctx context.Context) (int, time.Time, error) {
	var n int
	if err := t.queryRowContext(ctx, sqlOutboxBacklogCount).Scan(&n); err != nil {
		return 0, time.Time{}, classify(ctx, err, "sqlitestore: outbox backlog")
	}
	if n == 0 {
		return 0, time.Time{}, nil
	}
	var oldest int64
	if err := t.queryRowContext(ctx, sqlOutboxBacklogOldest).Scan(&oldest); err != nil {
		return 0, time.Time{}, classify(ctx, err, "sqlitestore: outbox backlog")
	}
	return n, fromTm(oldest), nil
}

// DeletePublishedOutbox implements store.OutboxRows, oldest publication first.
// limit <= 0 deletes nothing.
func (t *tx) DeletePublishedOutbox(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	return t.exec(ctx, "delete published outbox events", sqlDeletePublished, tm(before), limit)
}

func scanOutbox(r rowScanner) (outbox.Event, error) {
	var (
		e                               outbox.Event
		meta, status                    string
		next, lease, created, published int64
	)
	if err := r.Scan(&e.ID, &e.Shard, &e.AggregateType, &e.AggregateID, &e.EventType, &e.Destination,
		&e.Payload, &meta, &status, &e.Attempts, &next, &e.LeaseOwner, &lease, &e.LastError, &created,
		&published, &e.Version); err != nil {
		return outbox.Event{}, err
	}
	e.Status = outbox.Status(status)
	e.NextAttemptAt, e.LeaseUntil = fromTm(next), fromTm(lease)
	e.CreatedAt, e.PublishedAt = fromTm(created), fromTm(published)
	return e, fromJSON(meta, &e.Metadata, "outbox metadata")
}
