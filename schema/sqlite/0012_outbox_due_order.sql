-- The relay's due list orders by (next_attempt_at, id), as YDB's index
-- idx_status_shard_next does (an index's rows are ordered by its columns,
-- then the primary key). The index of 0004 ended in created_at, so SQLite
-- sorted every due row of a shard with equal next_attempt_at (all of a burst:
-- rows are due at their creation) on each claim: O(backlog) per claim, the
-- relay's loss against raw SendMessageBatch (issue 14; docs/bench.md). Ending
-- the index in id lets a claim read its LIMIT rows in index order.
--
-- Both status indexes become partial: outbox_due holds pending rows only,
-- outbox_published published rows only. A published row then leaves
-- outbox_due instead of moving inside it, and a new (pending) row is not
-- written to outbox_published at all: less index work per insert and per
-- publish, and indexes the size of the backlog. Queries name the status
-- literally, as a partial index requires (sqlite.org/partialindex.html).
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (shard, next_attempt_at, id) WHERE status = 'pending';
DROP INDEX outbox_published;
CREATE INDEX outbox_published ON outbox (published_at, id) WHERE status = 'published';
