-- Indexes for the operators' newest-first lists (issue 12 item 3), so that
-- every list query reads about LIMIT rows: a key range read in index order
-- with LIMIT, instead of a sort of the whole table. One action per ALTER
-- TABLE statement (ydb/docs/en/core/yql/reference/syntax/alter_table/indexes.md).
--
-- Both keys start with a timestamp, which the hot-key rule of migrations
-- 0012 and 0013 forbids for tables written on every order or saga step
-- (ydb/docs/en/core/dev/primary-key/row-oriented.md: a monotonically
-- increasing key prefix sends every write to the last partition). These two
-- tables are not: a dead letter is written only when work failed beyond
-- its retries; an audit record once per dead-letter command (redrive,
-- discard, purge, ingest: shared/redrive, run by an operator or one
-- scheduled ingest run), per automatic resolve of a dead letter, and per
-- operator stock change (shared/stock/admin.go). The write rate into the
-- last partition is the failure rate or a person's, far below what one
-- partition takes. A bucket prefix would
-- cost every list (9 branches) to spread load that does not exist.

--   dead_letters.idx_last_failed (last_failed_at): ListDeadLetters without
--     a status filter, newest failure first: the dated range read
--     backwards with LIMIT plus the NULL prefix. (With a status filter it
--     reads idx_status_last_failed (status, last_failed_at), migration 0008.)
ALTER TABLE dead_letters ADD INDEX idx_last_failed GLOBAL SYNC ON (last_failed_at);
--   audit.idx_at (at): ListAudit, newest first: the same two branches.
ALTER TABLE audit ADD INDEX idx_at GLOBAL SYNC ON (`at`);
