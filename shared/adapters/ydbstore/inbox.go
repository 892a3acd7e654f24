package ydbstore

import (
	"context"
	"time"
)

// Table inbox (schema/ydb/0005_inbox.sql).

const (
	yqlInboxExists = `
DECLARE $col_consumer AS Utf8;
DECLARE $message_id AS Utf8;
SELECT message_id FROM inbox WHERE ` + "`consumer`" + ` = $col_consumer AND message_id = $message_id;`

	yqlInsertInbox = `
DECLARE $col_consumer AS Utf8;
DECLARE $message_id AS Utf8;
DECLARE $processed_at AS Optional<Timestamp>;
DECLARE $expires_at AS Optional<Timestamp>;
INSERT INTO inbox (` + "`consumer`" + `, message_id, processed_at, expires_at)
VALUES ($col_consumer, $message_id, $processed_at, $expires_at);`
)

// InsertInbox implements store.InboxRows; Conflict if consumer already recorded messageID.
func (t *tx) InsertInbox(ctx context.Context, consumer, messageID string, at, expiresAt time.Time) error {
	key := newParams().text("$col_consumer", consumer).text("$message_id", messageID)
	return t.insert(ctx, rowKey("inbox", consumer, messageID), "inbox entry "+quoted(consumer+"/"+messageID), 0, yqlInboxExists, key,
		yqlInsertInbox, inboxParams(consumer, messageID, at, expiresAt))
}

// DeleteExpiredInbox implements store.InboxRows. On YDB the table's TTL on
// expires_at (schema/ydb/0005_inbox.sql) deletes expired entries in the
// background, so this deletes nothing and returns 0 (storetest
// Features.ExpiryByTTL): the expires_at index it would need was dropped by
// migration 0012 (a timestamp-leading key sends every
// write to the last partition).
func (t *tx) DeleteExpiredInbox(ctx context.Context, now time.Time, limit int) (int, error) {
	return 0, nil
}

func inboxParams(consumer, messageID string, at, expiresAt time.Time) *paramList {
	return newParams().
		text("$col_consumer", consumer).
		text("$message_id", messageID).
		optTS("$processed_at", at).
		optTS("$expires_at", expiresAt)
}
