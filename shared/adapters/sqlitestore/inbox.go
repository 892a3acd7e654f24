package sqlitestore

import (
	"context"
	"time"
)

const (
	sqlInsertInbox = `INSERT INTO inbox (consumer, message_id, processed_at, expires_at)
	VALUES (?, ?, ?, ?)`
	// A zero expiry never expires (as for idempotency keys).
	sqlDeleteExpiredInbox = `DELETE FROM inbox WHERE (consumer, message_id) IN (
		SELECT consumer, message_id FROM inbox WHERE expires_at <= ? AND expires_at <> ?
		ORDER BY expires_at LIMIT ?)`
)

// InsertInbox implements store.InboxRows; Conflict if consumer already recorded messageID.
func (t *tx) InsertInbox(ctx context.Context, consumer, messageID string, at, expiresAt time.Time) error {
	return t.insert(ctx, "inbox entry "+quoted(consumer+"/"+messageID), sqlInsertInbox,
		consumer, messageID, tm(at), tm(expiresAt))
}

// DeleteExpiredInbox implements store.InboxRows: entries with a non-zero expiry
// at or before now, earliest first. limit <= 0 deletes nothing.
func (t *tx) DeleteExpiredInbox(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	return t.exec(ctx, "delete expired inbox entries", sqlDeleteExpiredInbox, tm(now), zeroMicros, limit)
}
