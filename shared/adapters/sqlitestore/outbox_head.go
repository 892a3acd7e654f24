package sqlitestore

import (
	"context"

	"ordersaga/shared/domain/outbox"
)

// Heads: the relay's claim lists only pending rows with head = 1 (partial
// index outbox_head_due, migration 0015), so rows queued behind their
// aggregate's dead, backing-off or leased first row never take its place.
//
// The invariant the writes below keep, in the transaction that writes the
// outbox: the first blocking row (pending, or dead and bound for
// order-events: store.OutboxRows.EarliestPending; "first" by rowid, see
// sqlInsertOutbox) of every aggregate has head = 1. A row with head = 1
// that is not first is harmless (the relay checks EarliestPending before
// it claims, and clears such a row's head with DemoteOutbox).
//
//   - An insert is the head when its aggregate has no blocking row yet
//     (sqlInsertOutbox); the new row has the largest rowid, so it is first
//     only then.
//   - UpdateOutbox and MarkOutboxPublished give the first blocking row of
//     the aggregates they wrote head = 1 (promoteHeads): a row that stopped
//     blocking (published, discarded, a dead saga command) passes the head
//     on, and a redriven one that is first gets it.
//   - DemoteOutbox clears head only on rows the caller found behind an
//     earlier blocking row in the same transaction.

const (
	// blockingRow: a row that blocks its aggregate (pending, or dead and
	// bound for order-events: store.OutboxRows.EarliestPending), with
	// openStatus first so that SQLite reads outbox_open_by_aggregate (its
	// partial condition).
	blockingRow = openStatus + ` AND (status = '` + pending + `' OR destination = '` + outbox.DestOrderEvents + `')`

	// The first blocking row of each aggregate of the IN list (%s, filled
	// in by promoteHeads) gets head = 1.
	sqlPromoteHeads = `UPDATE OR FAIL outbox SET head = 1 WHERE head = 0 AND rowid IN (
	SELECT MIN(rowid) FROM outbox WHERE ` + blockingRow + ` AND aggregate_id IN (%s) GROUP BY aggregate_id)`

	// The same for the aggregates of the rows whose ids are the IN list.
	sqlPromoteHeadsOfRows = `UPDATE OR FAIL outbox SET head = 1 WHERE head = 0 AND rowid IN (
	SELECT MIN(rowid) FROM outbox WHERE ` + blockingRow + ` AND aggregate_id IN (
		SELECT aggregate_id FROM outbox WHERE id IN (%s)) GROUP BY aggregate_id)`

	// DemoteOutbox: the listed pending rows leave the claim's index.
	sqlDemoteOutbox = `UPDATE OR FAIL outbox SET head = 0 WHERE head = 1 AND status = '` + pending + `' AND id IN (%s)`
)

// promoteHeads gives the first blocking row of each aggregate head = 1.
func (t *tx) promoteHeads(ctx context.Context, aggregateIDs ...string) error {
	return t.inPadded(ctx, "promote outbox heads", sqlPromoteHeads, aggregateIDs)
}

// promoteHeadsOfRows is promoteHeads for the aggregates of the given rows.
func (t *tx) promoteHeadsOfRows(ctx context.Context, ids []string) error {
	return t.inPadded(ctx, "promote outbox heads", sqlPromoteHeadsOfRows, ids)
}

// DemoteOutbox implements store.OutboxBatch.
func (t *tx) DemoteOutbox(ctx context.Context, ids []string) error {
	return t.inPadded(ctx, "demote outbox rows", sqlDemoteOutbox, ids)
}

// inPadded runs query (a template whose %s is an IN list) for keys,
// maxInList at a time, each list padded with NULLs (which match nothing) to
// a power of two so that the statement cache holds few texts.
func (t *tx) inPadded(ctx context.Context, what, query string, keys []string) error {
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), maxInList)]
		keys = keys[len(chunk):]
		if _, err := t.exec(ctx, what, sprintfSQL(query, placeholders(paddedLen(len(chunk)))), paddedArgs(chunk)...); err != nil {
			return err
		}
	}
	return nil
}

// paddedArgs binds keys followed by NULLs up to paddedLen(len(keys)).
func paddedArgs(keys []string) []any {
	args := make([]any, paddedLen(len(keys)))
	for i, k := range keys {
		args[i] = k
	}
	return args
}
