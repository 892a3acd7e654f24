package ydbstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store/bucket"
)

// Heads and the bucketed due index (schema/ydb/0015_outbox_heads.sql).
//
// The relay's due list reads only rows with head = true from
// idx_bucket_status_shard_head_next (bucket, status, shard, head,
// next_attempt_at), so rows queued behind their aggregate's dead,
// backing-off or leased first row are outside its key ranges. The
// invariant the writes keep, in the transaction that writes the outbox:
// the first blocking row (pending, or dead and bound for order-events:
// store.OutboxRows.EarliestPending; first by aggregate_seq) of every aggregate
// has head = true. A head = true row that is not first is harmless: the
// relay checks EarliestPending before it claims and demotes such a row
// (DemoteOutbox).
//
//   - InsertOutbox: head is true when the aggregate has no blocking row
//     yet, read in the INSERT itself through idx_aggregate (as
//     aggregate_seq is).
//   - UpdateOutbox and MarkOutboxPublished: the first blocking rows of the
//     aggregates they wrote get head = true (one promote statement,
//     deferred with the write): a row that stopped blocking (published,
//     discarded, a dead saga command) passes the head on, and a redriven
//     one that is first gets it.
//   - DemoteOutbox: head = false on rows the caller found behind an earlier
//     blocking row in this transaction.
//
// bucket (FNV-1a of the id mod bucket.N) is written with head, always
// together, so a row with a NULL bucket has a NULL head: it was written
// before the migration. The lists read those through the NULL-bucket
// branches (head IS NULL), and a promote or demote moves them out.

// headCond stands for the head condition in a branch template of
// headBucketed.
const headCond = "{head}"

// headBucketed is bucketed (buckets.go) for the due index: in a bucket's
// branch headCond is "head = true"; in the NULL bucket's, "head IS NULL"
// (the rows written before heads existed; none has a bucket without a head).
func headBucketed(declares string, templates []string) string {
	var b strings.Builder
	b.WriteString(declares)
	var names []string
	for _, cond := range bucketConds() {
		head := "head = true"
		if cond == "bucket IS NULL" {
			head = "head IS NULL"
		}
		for _, tpl := range templates {
			name := "$b" + strconv.Itoa(len(names))
			names = append(names, name)
			branch := strings.ReplaceAll(strings.ReplaceAll(tpl, bucketCond, cond), headCond, head)
			b.WriteString(name + " = " + branch + ";\n")
		}
	}
	for i, name := range names {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT * FROM " + name)
	}
	b.WriteString(";")
	return b.String()
}

// aggregated names the final UNION ALL of a bucketed query $all and
// appends final, which reads from it.
func aggregated(yql, final string) string {
	i := strings.LastIndex(yql, "\n")
	return yql[:i+1] + "$all = " + yql[i+1:] + "\n" + final
}

const dueDeclares = `
DECLARE $pending AS Utf8;
DECLARE $shard AS Int64;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
`

// dueBranches are the due list's branches of one shard: the NULL next
// attempt (the zero time: due; a point prefix read in id order) and
// next_attempt_at <= $now (a range without NULL). The lease is the only
// filter outside the key: a branch reads at most LIMIT rows plus the heads
// leased right now (the batches in flight).
func dueBranches() []string {
	return []string{
		`SELECT ` + outboxColumns + ` FROM outbox VIEW idx_bucket_status_shard_head_next
WHERE ` + bucketCond + ` AND status = $pending AND shard = $shard AND ` + headCond + ` AND next_attempt_at IS NULL
	AND (lease_until IS NULL OR lease_until <= $now)
ORDER BY id
LIMIT $limit`,
		`SELECT ` + outboxColumns + ` FROM outbox VIEW idx_bucket_status_shard_head_next
WHERE ` + bucketCond + ` AND status = $pending AND shard = $shard AND ` + headCond + ` AND next_attempt_at <= $now
	AND (lease_until IS NULL OR lease_until <= $now)
ORDER BY next_attempt_at, id
LIMIT $limit`,
	}
}

// aboveBranch reads the heads of every shard above $shard: rows written
// under a larger OUTBOX_SHARDS, which exist only while they drain (a range
// of shards; the due filter is outside the key there).
const aboveBranch = `SELECT ` + outboxColumns + ` FROM outbox VIEW idx_bucket_status_shard_head_next
WHERE ` + bucketCond + ` AND status = $pending AND shard > $shard
	AND ` + headCond + ` AND (next_attempt_at IS NULL OR next_attempt_at <= $now)
	AND (lease_until IS NULL OR lease_until <= $now)
ORDER BY shard, head, next_attempt_at, id
LIMIT $limit`

var (
	// The relay's due list of one shard: the heads of every bucket (and
	// of the NULL bucket), merged by the adapter (firstDue).
	qListOutboxDue = headBucketed(dueDeclares, dueBranches())
	// The same over shard >= $shard (ListOutboxDueFrom).
	qListOutboxDueFrom = headBucketed(dueDeclares, append(dueBranches(), aboveBranch))
	// The capped backlog: per bucket, at most $limit pending rows of the
	// index's (bucket, status) prefix, read in index order; OutboxBacklog
	// caps the count, and the oldest is the smallest created_at read (a
	// NULL one, the zero time, makes dated < pending).
	qOutboxBacklog = aggregated(bucketed(`
DECLARE $pending AS Utf8;
DECLARE $limit AS Uint64;
`, []string{`SELECT created_at FROM outbox VIEW idx_bucket_status_shard_head_next
WHERE ` + bucketCond + ` AND status = $pending
ORDER BY shard, head, next_attempt_at, id
LIMIT $limit`}), `SELECT COUNT(*) AS pending, COUNT(created_at) AS dated, MIN(created_at) AS oldest FROM $all;`)
)

// The promote statements write, not read: each is deferred with the
// transaction's other writes and sent after them in the same query (or at
// once in immediate mode), so it sees them (a transaction reads its own
// writes, statement by statement: ydb/docs/en/core/concepts/transactions.md;
// ydb-platform/ydb#17679 was a bug in exactly that, fixed) and costs no
// round trip of its own. The first blocking row of an aggregate is the one
// with the smallest aggregate_seq (NULL, before migration 0010, as 0: such
// rows may tie, and then each gets head = true, which is harmless). A row
// already head with a bucket is not written again. A row written before
// migration 0015 gets bucket 0 when it is promoted: any bucket spreads, and
// such rows are few and drain.
const (
	// promoteTail picks the first blocking rows among $blocking and sets
	// their head (shared by the two promote statements).
	promoteTail = `$firsts = SELECT aggregate_id, MIN(seq) AS seq FROM $blocking GROUP BY aggregate_id;
UPDATE outbox ON
SELECT b.id AS id, COALESCE(b.bucket, 0l) AS bucket, true AS head
FROM $blocking AS b INNER JOIN $firsts AS f ON b.aggregate_id = f.aggregate_id AND b.seq = f.seq
WHERE COALESCE(b.head, false) = false OR b.bucket IS NULL;`

	// The aggregates are given (UpdateOutbox): two point prefixes of
	// idx_aggregate per aggregate, as yqlPendingByAggregate reads.
	yqlPromoteHeads = `
DECLARE $aggregate_ids AS List<Utf8>;
DECLARE $pending AS Utf8;
DECLARE $dead AS Utf8;
DECLARE $blocking_destination AS Utf8;
$blocking = SELECT id, aggregate_id, COALESCE(aggregate_seq, 0l) AS seq, head, bucket FROM outbox VIEW idx_aggregate
WHERE aggregate_id IN $aggregate_ids AND status = $pending
UNION ALL
SELECT id, aggregate_id, COALESCE(aggregate_seq, 0l) AS seq, head, bucket FROM outbox VIEW idx_aggregate
WHERE aggregate_id IN $aggregate_ids AND status = $dead AND destination = $blocking_destination;
` + promoteTail

	// The aggregates are those of the rows $ids (MarkOutboxPublished):
	// point reads by primary key, then the same prefixes of idx_aggregate
	// for each (an index lookup join).
	yqlPromoteHeadsOfRows = `
DECLARE $ids AS List<Utf8>;
DECLARE $pending AS Utf8;
DECLARE $dead AS Utf8;
DECLARE $blocking_destination AS Utf8;
$aggs = SELECT DISTINCT aggregate_id FROM outbox WHERE id IN $ids;
$blocking = SELECT o.id AS id, o.aggregate_id AS aggregate_id, COALESCE(o.aggregate_seq, 0l) AS seq, o.head AS head, o.bucket AS bucket
FROM $aggs AS a INNER JOIN outbox VIEW idx_aggregate AS o ON o.aggregate_id = a.aggregate_id
WHERE o.status = $pending OR (o.status = $dead AND o.destination = $blocking_destination);
` + promoteTail

	// DemoteOutbox: head = false, with the row's bucket, on the listed
	// rows (found by primary key; a missing row is skipped).
	yqlDemoteOutbox = `
DECLARE $heads AS List<Struct<'bucket': Int64, 'head': Bool, 'id': Utf8>>;
UPDATE outbox ON
SELECT id, bucket, head FROM AS_TABLE($heads);`
)

// headStruct is one element of yqlDemoteOutbox's $heads.
func headStruct(id string, head bool) types.Value {
	return types.StructValue(
		types.StructFieldValue("bucket", types.Int64Value(bucket.Of(id))),
		types.StructFieldValue("head", types.BoolValue(head)),
		types.StructFieldValue("id", types.TextValue(id)))
}

// DemoteOutbox implements store.OutboxBatch. The caller read the rows'
// aggregates in this transaction (EarliestPending), so the update is
// deferred to the commit with no read of its own.
func (t *tx) DemoteOutbox(ctx context.Context, ids []string) error {
	ids = distinct(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxInList)]
		ids = ids[len(chunk):]
		vs := make([]types.Value, len(chunk))
		for i, id := range chunk {
			vs[i] = headStruct(id, false)
		}
		if err := t.exec(ctx, "demote outbox rows", yqlDemoteOutbox, newParams().add("$heads", types.ListValue(vs...))); err != nil {
			return err
		}
	}
	return nil
}

// promoteHeads gives the first blocking row of each aggregate head = true
// (and a bucket), unless it has both already.
func (t *tx) promoteHeads(ctx context.Context, aggregateIDs []string) error {
	return t.promote(ctx, yqlPromoteHeads, "$aggregate_ids", distinct(aggregateIDs))
}

// promoteHeadsOfRows is promoteHeads for the aggregates of the given rows.
func (t *tx) promoteHeadsOfRows(ctx context.Context, ids []string) error {
	return t.promote(ctx, yqlPromoteHeadsOfRows, "$ids", distinct(ids))
}

func (t *tx) promote(ctx context.Context, yql, listParam string, keys []string) error {
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), maxInList)]
		keys = keys[len(chunk):]
		ps := newParams().textList(listParam, chunk).text("$pending", string(outbox.StatusPending)).
			text("$dead", string(outbox.StatusDead)).text("$blocking_destination", outbox.DestOrderEvents)
		if err := t.exec(ctx, "promote outbox heads", yql, ps); err != nil {
			return err
		}
	}
	return nil
}

func distinct(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
