-- A customer's orders, newest first (store.Orders.ListOrdersByCustomer,
-- the operator console's "find by customer"), instead of a look among the
-- newest sagas of each state. One action per ALTER TABLE statement
-- (ydb/docs/en/core/yql/reference/syntax/alter_table/columns.md: ADD
-- COLUMN; alter_table/indexes.md: ADD INDEX, ALTER INDEX ... SET).
--
-- Why bucketed: orders is written on every new order, and one customer may
-- place many of them (the bench sends every order as customer "c-1"), so a
-- key (customer_id, created_at) puts all of that customer's writes at the
-- end of one key prefix, a hot last partition that a split by load only
-- moves (ydb/docs/en/core/dev/primary-key/row-oriented.md: a monotonically
-- increasing key prefix). As for sagas (0013): bucket = FNV-1a(id) mod 8
-- (package shared/domain/store/bucket), written by every INSERT and UPSERT
-- of the row (they name every column; the id never changes, nor does the
-- bucket), and the index is keyed (bucket, customer_id, created_at), so
-- one customer's writes land in up to 8 partitions of the index table once
-- it splits by load (enabled below), and many customers' spread further.
-- A list reads, per bucket and for `bucket IS NULL` (orders written before
-- this migration, until their next update), the (bucket, customer) prefix
-- backwards with LIMIT, in one query: shared/adapters/ydbstore/bounds.go.
--
-- Cost: every order insert writes one more index row, and an order update
-- rewrites its index row (the UPSERT names every column); docs/ydb.md,
-- "Indexes".

ALTER TABLE orders ADD COLUMN bucket Int64;
ALTER TABLE orders ADD INDEX idx_bucket_customer_created GLOBAL SYNC ON (bucket, customer_id, created_at);
ALTER TABLE orders ALTER INDEX idx_bucket_customer_created SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
