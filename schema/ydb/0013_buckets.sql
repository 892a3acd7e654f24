-- Bucketed list indexes (issue 12 item 5, the part migration 0012 left
-- open). One action per ALTER TABLE statement
-- (ydb/docs/en/core/yql/reference/syntax/alter_table/columns.md: ADD
-- COLUMN; alter_table/indexes.md: ADD INDEX, ALTER INDEX ... SET, DROP
-- INDEX). `bucket` is not a YQL keyword (yql/essentials/sql/v1/SQLv1.g.in
-- has no such token), so it needs no backquotes.
--
-- The problem: idx_state_next (state, next_attempt_at), idx_state_updated
-- (state, updated_at) and idx_status_locked (status, locked_until) start
-- with a column of three or four values followed by a time, so every write
-- goes to the last partition of its state's range, and a split by load
-- only moves that hot spot (ydb/docs/en/core/dev/primary-key/row-oriented.md:
-- a monotonically increasing key prefix).
--
-- The design: bucket = FNV-1a(primary key) mod 8 (package
-- shared/store/bucket), written by every INSERT and UPSERT of the row
-- (the UPSERTs name every column), and fixed for the row's life because the
-- key never changes. Each index is re-keyed (bucket, state, time): the time
-- still grows, but within 8 bucket prefixes, so writes land in up to 8
-- partitions of the index table once it splits (by load, enabled below).
-- Every list reads each bucket as its own LIMITed key range in index order
-- (WHERE bucket = <b>l AND state = ... ORDER BY <time>, <key> LIMIT), plus a
-- `bucket IS NULL` branch for rows written before this migration (NULL is
-- its own point prefix), all in the same one query (UNION ALL), merged by
-- the adapter. No backfill: an old row gets its bucket the next time it is
-- updated, and one never updated again (a finished saga) is still found by
-- the NULL branch. The bucket count may grow, never shrink (bucket.N).
--
-- Rows read per list: (8 + 1) x the branches of the old design x LIMIT at
-- most, and only when that many rows are due in every branch; an empty
-- branch is one key-range probe (shared/ydbstore/bounds.go, docs/ydb.md
-- "Rows read"). Round trips are unchanged: the branches are one query.

ALTER TABLE sagas ADD COLUMN bucket Int64;
ALTER TABLE idempotency_keys ADD COLUMN bucket Int64;

--   sagas.idx_bucket_state_next (bucket, state, next_attempt_at): recovery's
--     due list (ListSagasDue): per bucket and unfinished state, the NULL
--     next attempt (a point prefix) and next_attempt_at <= now (a range).
ALTER TABLE sagas ADD INDEX idx_bucket_state_next GLOBAL SYNC ON (bucket, state, next_attempt_at);
--   sagas.idx_bucket_state_updated (bucket, state, updated_at): the
--     reconciler's newest-updated list (ListSagasByState), per bucket the
--     dated range read backwards plus the NULL prefix.
ALTER TABLE sagas ADD INDEX idx_bucket_state_updated GLOBAL SYNC ON (bucket, state, updated_at);
--   idempotency_keys.idx_bucket_status_locked (bucket, status, locked_until):
--     the lapsed-lock list (ListStaleIdempotencyKeys), per bucket the NULL
--     lock and locked_until <= now.
ALTER TABLE idempotency_keys ADD INDEX idx_bucket_status_locked GLOBAL SYNC ON (bucket, status, locked_until);

-- A global index is a hidden table with partitioning settings of its own
-- (alter_table/indexes.md, "Altering an index"): split by load, so the
-- bucket prefixes can move to partitions of their own when writes are hot.
ALTER TABLE sagas ALTER INDEX idx_bucket_state_next SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE sagas ALTER INDEX idx_bucket_state_updated SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE idempotency_keys ALTER INDEX idx_bucket_status_locked SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);

-- The unbucketed indexes go last, after their replacements exist. Between
-- this migration and the deploy of the code that reads the new indexes, an
-- older recovery run fails its list query (unknown index) and is retried by
-- the next scheduled run; nothing is lost (docs/ydb.md, "Indexes").
ALTER TABLE sagas DROP INDEX idx_state_next;
ALTER TABLE sagas DROP INDEX idx_state_updated;
ALTER TABLE idempotency_keys DROP INDEX idx_status_locked;
