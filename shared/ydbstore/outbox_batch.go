package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
)

// Batched outbox work of the relay (store.OutboxBatch): each batch costs
// two round trips (read the versions, UPDATE ON the rows at their expected
// version) instead of two per row.

const (
	// Like yqlListOutboxDue over shard >= $shard: a range of the index's
	// (status, shard) prefix. Only rows of the last configured shard and of
	// shards above it (left by a larger OUTBOX_SHARDS) are read.
	yqlListOutboxDueFrom = `
DECLARE $pending AS Utf8;
DECLARE $shard AS Int64;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
SELECT ` + outboxColumns + ` FROM outbox VIEW idx_status_shard_next
WHERE status = $pending AND shard >= $shard
	AND (next_attempt_at IS NULL OR next_attempt_at <= $now)
	AND (lease_until IS NULL OR lease_until <= $now)
ORDER BY (created_at IS NOT NULL), created_at, id
LIMIT $limit;`

	// Point reads by primary key.
	yqlOutboxVersions = `
DECLARE $ids AS List<Utf8>;
SELECT id, version FROM outbox WHERE id IN $ids;`

	// UPDATE ON changes only the listed columns of existing rows, found by
	// primary key; $rows holds the rows that were at their expected version,
	// with the new version.
	yqlLeaseOutbox = `
DECLARE $rows AS List<Struct<'id': Utf8, 'version': Int64>>;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;
UPDATE outbox ON
SELECT id, version, $lease_owner AS lease_owner, $lease_until AS lease_until
FROM AS_TABLE($rows);`

	yqlMarkOutboxPublished = `
DECLARE $rows AS List<Struct<'id': Utf8, 'version': Int64>>;
DECLARE $status AS Utf8;
DECLARE $published_at AS Optional<Timestamp>;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;
DECLARE $last_error AS Utf8;
DECLARE $expire_at AS Optional<Timestamp>;
UPDATE outbox ON
SELECT id, version, $status AS status, $published_at AS published_at, $lease_owner AS lease_owner,
	$lease_until AS lease_until, $last_error AS last_error, $expire_at AS expire_at
FROM AS_TABLE($rows);`
)

// ListOutboxDueFrom implements store.OutboxBatch. limit <= 0 returns nothing.
func (t *tx) ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	ps := newParams().text("$pending", string(outbox.StatusPending)).int("$shard", int64(fromShard)).
		ts("$now", now).uint("$limit", uint64(limit))
	var out []outbox.Event
	err := t.rows(ctx, "list due outbox events", yqlListOutboxDueFrom, ps, func(r query.Row) error {
		e, err := scanOutbox(r)
		out = append(out, e)
		return err
	})
	return out, err
}

// LeaseOutbox implements store.OutboxBatch.
func (t *tx) LeaseOutbox(ctx context.Context, rows []store.OutboxVersion, owner string, until time.Time) (int, error) {
	return t.batchVersioned(ctx, "lease outbox events", rows, yqlLeaseOutbox, func(ps *paramList) *paramList {
		return ps.text("$lease_owner", owner).optTS("$lease_until", until)
	})
}

// MarkOutboxPublished implements store.OutboxBatch. Published rows get
// their TTL expiry, as UpdateOutbox gives them.
func (t *tx) MarkOutboxPublished(ctx context.Context, rows []store.OutboxVersion, at time.Time) (int, error) {
	exp := outboxExpireAt(outbox.Event{Status: outbox.StatusPublished, PublishedAt: at}, t.cfg.OutboxRetention)
	return t.batchVersioned(ctx, "mark outbox events published", rows, yqlMarkOutboxPublished, func(ps *paramList) *paramList {
		return ps.text("$status", string(outbox.StatusPublished)).optTS("$published_at", at).
			text("$lease_owner", "").optTS("$lease_until", time.Time{}).text("$last_error", "").optTS("$expire_at", exp)
	})
}

// batchVersioned reads the versions of rows (maxInList at a time) and runs
// updateYQL over those at their expected version, with the new version and
// the parameters bind adds.
func (t *tx) batchVersioned(ctx context.Context, what string, rows []store.OutboxVersion, updateYQL string,
	bind func(*paramList) *paramList) (int, error) {
	total := 0
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), maxInList)]
		rows = rows[len(chunk):]
		ids := make([]string, len(chunk))
		for i, r := range chunk {
			ids[i] = r.ID
		}
		stored := make(map[string]int64, len(chunk))
		err := t.rows(ctx, "read versions to "+what, yqlOutboxVersions, newParams().textList("$ids", ids),
			func(r query.Row) error {
				var id string
				var v int64
				err := r.ScanNamed(query.Named("id", &id), query.Named("version", &v))
				stored[id] = v
				return err
			})
		if err != nil {
			return total, err
		}
		var hits []types.Value
		for _, r := range chunk {
			if v, ok := stored[r.ID]; ok && v == r.Version {
				delete(stored, r.ID) // a duplicate id in rows changes its row once
				hits = append(hits, types.StructValue(
					types.StructFieldValue("id", types.TextValue(r.ID)),
					types.StructFieldValue("version", types.Int64Value(r.Version+1))))
			}
		}
		if len(hits) == 0 {
			continue
		}
		if err := t.exec(ctx, what, updateYQL, bind(newParams().add("$rows", types.ListValue(hits...)))); err != nil {
			return total, err
		}
		total += len(hits)
	}
	return total, nil
}
