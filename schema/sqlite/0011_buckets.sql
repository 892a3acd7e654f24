-- The bucket column of the YDB twin (schema/ydb/0013_buckets.sql): FNV-1a
-- of the primary key mod 8 (package shared/store/bucket), written on
-- insert; the key never changes, so neither does the bucket. Only the YDB
-- adapter reads by it (it spreads that database's list indexes over 8
-- prefixes); SQLite keeps its simple indexes. Rows written before this
-- migration hold NULL, which nothing here reads.
ALTER TABLE sagas ADD COLUMN bucket INTEGER;
ALTER TABLE idempotency_keys ADD COLUMN bucket INTEGER;
