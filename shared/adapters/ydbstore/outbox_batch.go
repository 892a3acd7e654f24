package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// Batched outbox work of the relay (store.OutboxBatch). Deferred (the
// default): one UPDATE ON for the whole batch, sent with the commit behind
// one batch guard (outboxBatchGuard) that fails the query unless every
// row not read in this transaction is at its expected version, so a batch
// costs no round trip of its own: the relay's claim is its snapshot list,
// EarliestPending and the commit, its record is the commit alone. A failed
// guard voids the attempt (errOptimisticMiss) and the closure reruns in
// immediate mode, which reads the versions first (yqlOutboxVersions) and
// updates only the rows that match, counting them exactly as the port
// promises.

const (
	// The batch guard: the rows of $expected (id, expected version) that
	// the table holds at that version, counted by a join on the primary
	// key (ydb/docs/en/core/yql/reference/syntax/select/join.md: ON with
	// equalities combined by AND), must be all of them, else Ensure fails
	// the whole query (builtins/basic.md, Ensure) and nothing commits.
	outboxBatchGuardDeclare = `
DECLARE $expected AS List<Struct<'id': Utf8, 'version': Int64>>;`
	outboxBatchGuard = `
$matched = (SELECT COUNT(*) FROM AS_TABLE($expected) AS e INNER JOIN outbox AS o ON e.id = o.id AND e.version = o.version);
SELECT Ensure(0, $matched = ListLength($expected), "` + guardMarker + `") AS guard;`

	// Point reads by primary key.
	yqlOutboxVersions = `
DECLARE $ids AS List<Utf8>;
SELECT id, version FROM outbox WHERE id IN $ids;`

	// UPDATE ON changes only the listed columns of existing rows, found by
	// primary key; $rows holds the rows that were at their expected version,
	// with the new version.
	yqlLeaseOutbox = leaseOutboxDeclares + leaseOutboxBody

	leaseOutboxDeclares = `
DECLARE $rows AS List<Struct<'id': Utf8, 'version': Int64>>;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;`
	leaseOutboxBody = `
UPDATE outbox ON
SELECT id, version, $lease_owner AS lease_owner, $lease_until AS lease_until
FROM AS_TABLE($rows);`

	// The DECLAREs come first: YQL refuses one after the guard's
	// statements (see hoistDeclares).
	yqlLeaseOutboxGuarded = leaseOutboxDeclares + outboxBatchGuardDeclare + outboxBatchGuard + leaseOutboxBody

	yqlMarkOutboxPublished = markOutboxPublishedDeclares + markOutboxPublishedBody

	markOutboxPublishedDeclares = `
DECLARE $rows AS List<Struct<'id': Utf8, 'version': Int64>>;
DECLARE $status AS Utf8;
DECLARE $published_at AS Optional<Timestamp>;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;
DECLARE $last_error AS Utf8;
DECLARE $expire_at AS Optional<Timestamp>;`
	markOutboxPublishedBody = `
UPDATE outbox ON
SELECT id, version, $status AS status, $published_at AS published_at, $lease_owner AS lease_owner,
	$lease_until AS lease_until, $last_error AS last_error, $expire_at AS expire_at
FROM AS_TABLE($rows);`

	yqlMarkOutboxPublishedGuarded = markOutboxPublishedDeclares + outboxBatchGuardDeclare + outboxBatchGuard +
		markOutboxPublishedBody
)

// ListOutboxDueFrom implements store.OutboxBatch. limit <= 0 returns nothing.
func (t *tx) ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	ps := newParams().text("$pending", string(outbox.StatusPending)).int("$shard", int64(fromShard)).
		ts("$now", now).uint("$limit", uint64(limit))
	var out []outbox.Event
	// Outside the transaction, like ListOutboxDue.
	err := t.snapshotRows(ctx, "list due outbox events", qListOutboxDueFrom, ps, func(r query.Row) error {
		e, err := scanOutbox(r)
		out = append(out, e)
		return err
	})
	return firstDue(out, limit), err
}

// LeaseOutbox implements store.OutboxBatch.
func (t *tx) LeaseOutbox(ctx context.Context, rows []store.OutboxVersion, owner string, until time.Time) (int, error) {
	return t.batchVersioned(ctx, "lease outbox events", rows, yqlLeaseOutbox, yqlLeaseOutboxGuarded, func(ps *paramList) *paramList {
		return ps.text("$lease_owner", owner).optTS("$lease_until", until)
	})
}

// MarkOutboxPublished implements store.OutboxBatch. Published rows get
// their TTL expiry, as UpdateOutbox gives them.
func (t *tx) MarkOutboxPublished(ctx context.Context, rows []store.OutboxVersion, at time.Time) (int, error) {
	exp := outboxExpireAt(outbox.Event{Status: outbox.StatusPublished, PublishedAt: at}, t.cfg.OutboxRetention)
	n, err := t.batchVersioned(ctx, "mark outbox events published", rows, yqlMarkOutboxPublished, yqlMarkOutboxPublishedGuarded, func(ps *paramList) *paramList {
		return ps.text("$status", string(outbox.StatusPublished)).optTS("$published_at", at).
			text("$lease_owner", "").optTS("$lease_until", time.Time{}).text("$last_error", "").optTS("$expire_at", exp)
	})
	if err != nil || n == 0 {
		return n, err
	}
	// The published rows stopped blocking: their aggregates' next blocking
	// rows become the heads (outbox_heads.go). Its first read sends the
	// deferred mark, so it reads the rows as published.
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return n, t.promoteHeadsOfRows(ctx, ids)
}

// batchVersioned updates, with updateYQL, each row at its expected version
// (maxInList at a time), giving it the next version and the parameters
// bind adds. Deferred: see the file comment (guardedYQL is updateYQL behind
// the batch guard). Immediate: the versions are read first.
func (t *tx) batchVersioned(ctx context.Context, what string, rows []store.OutboxVersion, updateYQL, guardedYQL string,
	bind func(*paramList) *paramList) (int, error) {
	total := 0
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), maxInList)]
		rows = rows[len(chunk):]
		var (
			hits []store.OutboxVersion
			err  error
		)
		if t.immediate || t.readOnly {
			hits, err = t.matchVersions(ctx, what, chunk)
			if err != nil {
				return total, err
			}
		} else {
			hits = t.assumeVersions(chunk)
		}
		if len(hits) == 0 {
			continue
		}
		var next, guard []types.Value
		for _, r := range hits {
			next = append(next, versionStruct(r.ID, r.Version+1))
			if _, known := t.seen[rowKey("outbox", r.ID)]; !known && !t.immediate {
				guard = append(guard, versionStruct(r.ID, r.Version))
			}
		}
		ps := bind(newParams().add("$rows", types.ListValue(next...)))
		yql := updateYQL
		if len(guard) > 0 {
			yql = guardedYQL
			ps.add("$expected", types.ListValue(guard...))
		}
		if err := t.exec(ctx, what, yql, ps); err != nil {
			return total, err
		}
		for _, r := range hits {
			t.saw(rowKey("outbox", r.ID), r.Version+1)
		}
		total += len(hits)
	}
	return total, nil
}

func versionStruct(id string, version int64) types.Value {
	return types.StructValue(
		types.StructFieldValue("id", types.TextValue(id)),
		types.StructFieldValue("version", types.Int64Value(version)))
}

// assumeVersions is the optimistic choice of rows: each distinct id once;
// one this transaction read counts only at the version it read, any other
// is assumed at its expected version (the batch guard checks it at the
// commit).
func (t *tx) assumeVersions(chunk []store.OutboxVersion) []store.OutboxVersion {
	var hits []store.OutboxVersion
	taken := make(map[string]bool, len(chunk))
	for _, r := range chunk {
		if taken[r.ID] {
			continue
		}
		if v, known := t.seen[rowKey("outbox", r.ID)]; known && v != r.Version {
			continue // absent, or at another version: left alone
		}
		taken[r.ID] = true
		hits = append(hits, r)
	}
	return hits
}

// matchVersions reads the stored versions of chunk and returns the rows at
// their expected version (a duplicate id counts once).
func (t *tx) matchVersions(ctx context.Context, what string, chunk []store.OutboxVersion) ([]store.OutboxVersion, error) {
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
		return nil, err
	}
	var hits []store.OutboxVersion
	for _, r := range chunk {
		if v, ok := stored[r.ID]; ok && v == r.Version {
			delete(stored, r.ID) // a duplicate id in rows changes its row once
			hits = append(hits, r)
		}
	}
	return hits, nil
}
