package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"
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

	// Expired at $now (NULL never expires), earliest first; the keys are
	// then deleted by yqlDeleteInboxKeys.
	yqlListExpiredInbox = `
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + "`consumer`" + `, message_id FROM inbox VIEW idx_expires
WHERE expires_at <= $now
ORDER BY expires_at
LIMIT $limit;`

	// DELETE ... ON deletes the rows whose primary key is in the subquery.
	// Struct member names are quoted as in the SDK's own type syntax.
	yqlDeleteInboxKeys = `
DECLARE $keys AS List<Struct<'consumer': Utf8, 'message_id': Utf8>>;
DELETE FROM inbox ON
SELECT ` + "`consumer`" + `, message_id FROM AS_TABLE($keys);`
)

// InsertInbox implements store.Inbox; Conflict if consumer already recorded messageID.
func (t *tx) InsertInbox(ctx context.Context, consumer, messageID string, at, expiresAt time.Time) error {
	key := newParams().text("$col_consumer", consumer).text("$message_id", messageID)
	return t.insert(ctx, rowKey("inbox", consumer, messageID), "inbox entry "+quoted(consumer+"/"+messageID), 0, yqlInboxExists, key,
		yqlInsertInbox, inboxParams(consumer, messageID, at, expiresAt))
}

// DeleteExpiredInbox implements store.Inbox: entries with an expiry at or
// before now, earliest first (YDB's TTL deletes them in the background too).
// limit <= 0 deletes nothing.
func (t *tx) DeleteExpiredInbox(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var keys [][2]string
	err := t.rows(ctx, "list expired inbox entries", yqlListExpiredInbox,
		newParams().ts("$now", now).uint("$limit", uint64(limit)),
		func(r query.Row) error {
			var k [2]string
			err := r.ScanNamed(query.Named("consumer", &k[0]), query.Named("message_id", &k[1]))
			keys = append(keys, k)
			return err
		})
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	if err := t.exec(ctx, "delete expired inbox entries", yqlDeleteInboxKeys, inboxKeysParams(keys)); err != nil {
		return 0, err
	}
	return len(keys), nil
}

func inboxParams(consumer, messageID string, at, expiresAt time.Time) *paramList {
	return newParams().
		text("$col_consumer", consumer).
		text("$message_id", messageID).
		optTS("$processed_at", at).
		optTS("$expires_at", expiresAt)
}

// inboxKeysParams binds $keys, a List<Struct<consumer, message_id>>; keys
// must not be empty.
func inboxKeysParams(keys [][2]string) *paramList {
	items := make([]types.Value, len(keys))
	for i, k := range keys {
		items[i] = types.StructValue(
			types.StructFieldValue("consumer", types.TextValue(k[0])),
			types.StructFieldValue("message_id", types.TextValue(k[1])),
		)
	}
	return newParams().add("$keys", types.ListValue(items...))
}
