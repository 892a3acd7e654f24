-- The relay's claim reads only each aggregate's head: the row that is its
-- aggregate's first blocking row (pending, or dead and bound for
-- order-events; the order is the rowid's, see 0013). Rows queued behind a
-- dead, backing-off, leased or just-redriven head are not in the claim's
-- index at all, so however many pile up they never fill the claim's LIMIT
-- window (before, a claim read the oldest due rows of the whole backlog and
-- could find nothing but blocked ones: docs/relay.md, "Heads").
--
-- head is kept by the adapter in the transactions that write the outbox
-- (shared/sqlitestore/outbox_head.go): an insert is the head when its
-- aggregate has no blocking row yet; an update or publish gives the
-- aggregate's first blocking row the head (after a publish, discard or a
-- dead saga command, the next one; after a redrive, the redriven one if it
-- is first); the relay's claim clears head on a due row that it finds
-- behind an earlier blocking row (DemoteOutbox). A stale 1 costs
-- at most one look by the claim; a missing 1 would strand the aggregate,
-- which the writes above never leave.
ALTER TABLE outbox ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
UPDATE outbox SET head = 1 WHERE rowid IN (
    SELECT MIN(rowid) FROM outbox
    WHERE status IN ('pending', 'dead') AND (status = 'pending' OR destination = 'order-events')
    GROUP BY aggregate_id);
-- The claim's due list: pending heads of one shard by (next_attempt_at, id).
-- outbox_due (0012) stays for the backlog count and the shard probe.
CREATE INDEX outbox_head_due ON outbox (shard, next_attempt_at, id) WHERE status = 'pending' AND head = 1;
-- The bucket column of the YDB twin (schema/ydb/0015_outbox_heads.sql),
-- which spreads that database's due index over 8 prefixes. SQLite has one
-- writer and keeps its partial indexes: the column stays NULL and nothing
-- here reads it.
ALTER TABLE outbox ADD COLUMN bucket INTEGER;
