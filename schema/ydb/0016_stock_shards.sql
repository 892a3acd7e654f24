-- Sharded stock for hot SKUs (package inventory: Shard, Take). One action
-- per ALTER TABLE statement
-- (ydb/docs/en/core/yql/reference/syntax/alter_table: ADD COLUMN).
--
-- stock.shards: how many sub-rows new reservations of the SKU spread over;
-- NULL, 0 or 1 = not sharded (the units are on the stock row, as before).
ALTER TABLE stock ADD COLUMN shards Int64;

-- stock_shards: the sub-rows of sharded SKUs. A reservation writes one
-- sub-row (more only when its own is short) and only reads the stock row,
-- so concurrent orders of one hot SKU no longer conflict on one row's
-- optimistic lock. The sub-rows of one SKU are adjacent keys; splitting by
-- load lets YDB move them to different partitions when one is CPU-bound
-- (ydb/docs/en/core/concepts/datamodel/table: partitioning by load). Read
-- by primary key and by SKU prefix (the operator's sum).
CREATE TABLE IF NOT EXISTS stock_shards (
    sku        Utf8 NOT NULL,
    shard      Int64 NOT NULL,
    available  Int64,
    reserved   Int64,
    sold       Int64,
    updated_at Timestamp,
    version    Int64,
    PRIMARY KEY (sku, shard)
);
ALTER TABLE stock_shards SET (AUTO_PARTITIONING_BY_LOAD = ENABLED);

-- reservations.takes: JSON array of inventory.Take, the sub-rows a
-- reservation took units from (NULL: none, every unit is on stock rows).
ALTER TABLE reservations ADD COLUMN takes Json;
