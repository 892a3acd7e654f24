-- Split hot tables by load (issue 12 item 7): every order writes one row to
-- orders, idempotency_keys and sagas and several to outbox, and every saga
-- step rewrites its sagas row and outbox rows. With
-- AUTO_PARTITIONING_BY_LOAD a partition that stays CPU-bound is split
-- (ydb/docs/en/core/concepts/datamodel/table: partitioning by load), so
-- one shard does not cap throughput. Random uuid keys spread the splits.
-- (ydb/docs/en/core/yql/reference/syntax/alter_table: SET (...)).
ALTER TABLE orders SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE idempotency_keys SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE sagas SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE saga_log SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE outbox SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
ALTER TABLE inbox SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);
