package ydbstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store/bucket"
)

// Table outbox (schema/ydb/0004_outbox.sql).

// outboxColumns are the columns of outbox.Event; expire_at (the TTL column)
// is written but never read.
const outboxColumns = `id, shard, aggregate_type, aggregate_id, event_type, destination, payload,
	metadata, status, attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at,
	published_at, version`

const outboxDeclares = `
DECLARE $id AS Utf8;
DECLARE $shard AS Int64;
DECLARE $aggregate_type AS Utf8;
DECLARE $aggregate_id AS Utf8;
DECLARE $event_type AS Utf8;
DECLARE $destination AS Utf8;
DECLARE $payload AS Optional<String>;
DECLARE $metadata AS Json;
DECLARE $status AS Utf8;
DECLARE $attempts AS Int64;
DECLARE $next_attempt_at AS Optional<Timestamp>;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;
DECLARE $last_error AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $published_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
DECLARE $expire_at AS Optional<Timestamp>;
`

const outboxValues = `($id, $shard, $aggregate_type, $aggregate_id, $event_type, $destination, $payload,
	$metadata, $status, $attempts, $next_attempt_at, $lease_owner, $lease_until, $last_error,
	$created_at, $published_at, $version, $expire_at)`

// outboxStruct names every bound column for AsStruct.
const outboxStruct = `$id AS id, $shard AS shard, $aggregate_type AS aggregate_type,
	$aggregate_id AS aggregate_id, $event_type AS event_type, $destination AS destination,
	$payload AS payload, $metadata AS metadata, $status AS status, $attempts AS attempts,
	$next_attempt_at AS next_attempt_at, $lease_owner AS lease_owner, $lease_until AS lease_until,
	$last_error AS last_error, $created_at AS created_at, $published_at AS published_at,
	$version AS version, $expire_at AS expire_at`

const (
	// The row takes the next aggregate_seq of its aggregate, read in this
	// statement through idx_aggregate (a point prefix: the few rows of one
	// order or saga); see schema/ydb/0010_sequence_and_sold.sql. It is its
	// aggregate's head when no row of the aggregate blocks yet, read the
	// same way (outbox_heads.go); bucket is written with head.
	yqlInsertOutbox = outboxDeclares + `DECLARE $bucket AS Int64;
DECLARE $blocking_pending AS Utf8;
DECLARE $blocking_dead AS Utf8;
DECLARE $blocking_destination AS Utf8;
$last_seq = (SELECT MAX(aggregate_seq) FROM outbox VIEW idx_aggregate WHERE aggregate_id = $aggregate_id);
$blockers = (SELECT COUNT(*) FROM outbox VIEW idx_aggregate WHERE aggregate_id = $aggregate_id
	AND (status = $blocking_pending OR (status = $blocking_dead AND destination = $blocking_destination)));
INSERT INTO outbox (` + outboxColumns + `, expire_at, aggregate_seq, bucket, head)
SELECT id, shard, aggregate_type, aggregate_id, event_type, destination, payload, metadata, status,
	attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at, published_at,
	version, expire_at, COALESCE($last_seq, 0) + 1 AS aggregate_seq, $bucket AS bucket,
	COALESCE($blockers, 0) = 0 AS head
FROM AS_TABLE(AsList(AsStruct(` + outboxStruct + `)));`

	yqlUpsertOutbox = outboxDeclares + `
UPSERT INTO outbox (` + outboxColumns + `, expire_at)
VALUES ` + outboxValues + `;`

	yqlGetOutbox = `
DECLARE $id AS Utf8;
SELECT ` + outboxColumns + ` FROM outbox WHERE id = $id;`

	yqlOutboxVersion = `
DECLARE $id AS Utf8;
SELECT version FROM outbox WHERE id = $id;`

	// Every blocking row of the given aggregates — pending, or dead and
	// bound for order-events (store.OutboxRows.EarliestPending) — two point
	// prefixes of idx_aggregate; firstBlocking picks the first of each in
	// Go by aggregate_seq (such rows per aggregate are few). The upsert of
	// an update leaves aggregate_seq, bucket and head alone (UPSERT keeps
	// unlisted columns; outbox_heads.go).
	yqlPendingByAggregate = `
DECLARE $aggregate_ids AS List<Utf8>;
DECLARE $pending AS Utf8;
DECLARE $dead AS Utf8;
DECLARE $blocking_destination AS Utf8;
$pending_rows = SELECT aggregate_id, id, aggregate_seq, created_at FROM outbox VIEW idx_aggregate
WHERE aggregate_id IN $aggregate_ids AND status = $pending;
$dead_rows = SELECT aggregate_id, id, aggregate_seq, created_at FROM outbox VIEW idx_aggregate
WHERE aggregate_id IN $aggregate_ids AND status = $dead AND destination = $blocking_destination;
SELECT * FROM $pending_rows UNION ALL SELECT * FROM $dead_rows;`
)

// maxInList bounds the ids bound into one List parameter.
const maxInList = 500

// InsertOutbox implements store.OutboxRows; Conflict if the id exists.
func (t *tx) InsertOutbox(ctx context.Context, e outbox.Event) error {
	ps := outboxParams(e, t.cfg.OutboxRetention).int("$bucket", bucket.Of(e.ID)).
		text("$blocking_pending", string(outbox.StatusPending)).text("$blocking_dead", string(outbox.StatusDead)).
		text("$blocking_destination", outbox.DestOrderEvents)
	return t.insert(ctx, rowKey("outbox", e.ID), "outbox event "+quoted(e.ID), e.Version, yqlOutboxVersion, idParam(e.ID),
		yqlInsertOutbox, ps)
}

// GetOutbox implements store.OutboxRows; NotFound if missing.
func (t *tx) GetOutbox(ctx context.Context, id string) (outbox.Event, error) {
	var e outbox.Event
	err := t.get(ctx, "outbox event "+quoted(id), yqlGetOutbox, idParam(id), func(r query.Row) (err error) {
		e, err = scanOutbox(r)
		return err
	})
	t.sawGet(rowKey("outbox", id), err, e.Version)
	return e, err
}

// UpdateOutbox implements store.OutboxRows: it stores e (with e.Version as
// given) if the stored version is expectedVersion; Conflict if not, NotFound
// if missing. A published row gets its TTL expiry (see outboxExpireAt).
func (t *tx) UpdateOutbox(ctx context.Context, e outbox.Event, expectedVersion int64) error {
	err := t.updateVersioned(ctx, rowKey("outbox", e.ID), "outbox event "+quoted(e.ID), expectedVersion, e.Version,
		yqlOutboxVersion, idParam(e.ID), yqlUpsertOutbox, outboxParams(e, t.cfg.OutboxRetention))
	if err != nil {
		return err
	}
	// The row may have stopped blocking (its aggregate's next blocking row
	// becomes the head) or started again (a redrive: it may be first);
	// outbox_heads.go.
	return t.promoteHeads(ctx, []string{e.AggregateID})
}

// ListOutboxDue implements store.OutboxRows. limit <= 0 returns nothing.
func (t *tx) ListOutboxDue(ctx context.Context, shard int, now time.Time, limit int) ([]outbox.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []outbox.Event
	// Outside the transaction: a snapshot read takes
	// no locks on the due range, which the fast path and new orders keep
	// writing into, so the claim does not abort on "transaction locks
	// invalidated". The rows are then claimed by version (UpdateOutbox's
	// guard or read), which makes a stale candidate a Conflict, never a
	// double claim.
	err := t.snapshotRows(ctx, "list due outbox events", qListOutboxDue, outboxDueParams(shard, now, limit),
		func(r query.Row) error {
			e, err := scanOutbox(r)
			out = append(out, e)
			return err
		})
	return firstDue(out, limit), err
}

// firstDue sorts the branches' rows by (NextAttemptAt, ID), the zero time
// first, and keeps the first limit.
func firstDue(es []outbox.Event, limit int) []outbox.Event {
	slices.SortFunc(es, func(a, b outbox.Event) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return es[:min(len(es), limit)]
}

// EarliestPending implements store.OutboxRows (first by aggregate_seq, the
// order the rows were written in), querying at most maxInList
// aggregates at a time. Aggregates without pending rows are absent.
func (t *tx) EarliestPending(ctx context.Context, aggregateIDs []string) (map[string]string, error) {
	type first struct {
		id      string
		seq     int64 // 0: a row written before aggregate_seq existed (first)
		created time.Time
	}
	// before orders rows by (aggregate_seq, created_at, id), NULL seq first.
	before := func(a, b first) bool {
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		if !a.created.Equal(b.created) {
			return a.created.Before(b.created)
		}
		return a.id < b.id
	}
	best := make(map[string]first)
	for len(aggregateIDs) > 0 {
		chunk := aggregateIDs[:min(len(aggregateIDs), maxInList)]
		aggregateIDs = aggregateIDs[len(chunk):]
		err := t.rows(ctx, "earliest pending outbox events", yqlPendingByAggregate,
			newParams().textList("$aggregate_ids", chunk).text("$pending", string(outbox.StatusPending)).
				text("$dead", string(outbox.StatusDead)).text("$blocking_destination", outbox.DestOrderEvents),
			func(r query.Row) error {
				var (
					agg, id string
					seq     *int64
					created *time.Time
				)
				if err := r.ScanNamed(query.Named("aggregate_id", &agg), query.Named("id", &id),
					query.Named("aggregate_seq", &seq), query.Named("created_at", &created)); err != nil {
					return err
				}
				f := first{id: id, created: fromTS(created)}
				if seq != nil {
					f.seq = *seq
				}
				if b, ok := best[agg]; !ok || before(f, b) {
					best[agg] = f
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	out := make(map[string]string, len(best))
	for agg, b := range best {
		out[agg] = b.id
	}
	return out, nil
}

// OutboxBacklogCap bounds the rows OutboxBacklog reads.
const OutboxBacklogCap = 1000

// OutboxBacklog implements store.OutboxRows: the pending count, capped at
// OutboxBacklogCap (store.OutboxRows allows it), and the CreatedAt of the
// oldest of the rows counted (zero when none is pending). Each bucket's
// branch reads at most OutboxBacklogCap rows (qOutboxBacklog).
func (t *tx) OutboxBacklog(ctx context.Context) (int, time.Time, error) {
	var (
		pending, dated uint64
		oldest         *time.Time
	)
	_, err := t.row(ctx, "outbox backlog", qOutboxBacklog,
		newParams().text("$pending", string(outbox.StatusPending)).uint("$limit", OutboxBacklogCap),
		func(r query.Row) error {
			return r.ScanNamed(query.Named("pending", &pending), query.Named("dated", &dated),
				query.Named("oldest", &oldest))
		})
	n := int(min(pending, OutboxBacklogCap))
	if err != nil || pending == 0 || dated < pending {
		return n, time.Time{}, err
	}
	return n, fromTS(oldest), nil
}

// DeletePublishedOutbox implements store.OutboxRows. On YDB the table's TTL
// (expire_at = published_at + Config.OutboxRetention,
// schema/ydb/0004_outbox.sql) deletes published rows in the background, so
// this deletes nothing and returns 0 (storetest Features.ExpiryByTTL):
// there is no index to find them by publication time (dropped by
// migration 0012).
func (t *tx) DeletePublishedOutbox(ctx context.Context, before time.Time, limit int) (int, error) {
	return 0, nil
}
