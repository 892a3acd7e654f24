-- The relay's due list orders by (next_attempt_at, id), as YDB's index
-- idx_status_shard_next does (an index's rows are ordered by its columns,
-- then the primary key). The index of 0004 ended in created_at, so SQLite
-- sorted every due row of a shard with equal next_attempt_at (all of a burst:
-- rows are due at their creation) on each claim: O(backlog) per claim, the
-- relay's loss against raw SendMessageBatch (issue 14; docs/relay.md). Ending
-- the index in id lets a claim read its LIMIT rows in index order.
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (status, shard, next_attempt_at, id);
