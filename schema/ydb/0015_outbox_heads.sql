-- The relay's claim reads only aggregates' heads, from a bucketed index
-- (issue 27 "a relay that cannot be starved", issue 22 finding 2). One
-- action per ALTER TABLE statement (ydb/docs/en/core/yql/reference/syntax/
-- alter_table/columns.md: ADD COLUMN; alter_table/indexes.md: ADD INDEX,
-- ALTER INDEX ... SET, DROP INDEX).
--
-- head: true on the row of an aggregate that the relay may claim next, its
-- first blocking row (pending, or dead and bound for order-events, first by
-- aggregate_seq). The adapter keeps it in the transactions that write the
-- outbox (shared/ydbstore/outbox_heads.go): an INSERT is the head when its
-- aggregate has no blocking row yet; an update or publish gives the
-- aggregate's first blocking row the head; the claim sets head = false on a
-- listed row it finds behind an earlier blocking one. Rows queued behind a
-- dead, backing-off or leased head are then outside the claim's key ranges,
-- however many there are (before, the due list read the oldest due rows of
-- one prefix and could find only blocked ones; docs/relay.md, "Heads").
--
-- bucket: FNV-1a(id) mod 8 (package shared/store/bucket), written with
-- head, always together. Per-aggregate order does not come from the index
-- (an aggregate has one head at a time; the claim checks EarliestPending),
-- so the rows of one aggregate may sit in any bucket.
--
-- The old due index idx_status_shard_next (status, shard, next_attempt_at)
-- took every outbox insert and publish at the end of one key prefix (one
-- shard by default): a hot last partition that a split by load only moves.
-- The new key starts with the bucket, so those writes land in 8 prefixes,
-- and the index table splits by load. idx_aggregate, read and written by
-- every outbox insert, splits by load too.
--
-- Resumable: one action per statement, each of the forms migrations
-- 0010-0014 use (ADD COLUMN, ADD INDEX, ALTER INDEX ... SET, DROP INDEX),
-- so a run interrupted inside this file can be resumed statement by
-- statement the same way as theirs (shared/ydbstore/migrate.go); SET is
-- idempotent, and the old index is dropped only after its replacement
-- exists.
--
-- Rows written before this migration have bucket and head NULL: the claim
-- reads them through the NULL-bucket branches (a point prefix), and sets
-- head = false with a bucket on those it finds blocked, so they leave the
-- NULL prefix; their aggregate's next head gets a bucket when promoted.
ALTER TABLE outbox ADD COLUMN bucket Int64;
ALTER TABLE outbox ADD COLUMN head Bool;

--   outbox.idx_bucket_status_shard_head_next (bucket, status, shard, head,
--     next_attempt_at): the claim (per bucket, pending, shard, head = true:
--     the NULL next attempt and next_attempt_at <= now; for rows written
--     before, head IS NULL) and the capped backlog count (per bucket, the
--     pending prefix).
ALTER TABLE outbox ADD INDEX idx_bucket_status_shard_head_next GLOBAL SYNC ON (bucket, status, shard, head, next_attempt_at);
ALTER TABLE outbox ALTER INDEX idx_bucket_status_shard_head_next SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE outbox ALTER INDEX idx_aggregate SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);

-- The old index goes last, after its replacement exists. Between this
-- migration and the deploy of the code that reads the new index, an older
-- relay fails its claim (unknown index) and the next timer run retries;
-- the fast path publishes meanwhile, and nothing is lost.
ALTER TABLE outbox DROP INDEX idx_status_shard_next;
