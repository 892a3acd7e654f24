-- Sharded stock for hot SKUs (package inventory: Shard, Take).
--
-- stock.shards: how many sub-rows new reservations of the SKU spread over;
-- 0 or 1 = not sharded (the units are on the stock row, as before).
ALTER TABLE stock ADD COLUMN shards INTEGER NOT NULL DEFAULT 0;

-- stock_shards: the sub-rows of sharded SKUs. A reservation writes one
-- sub-row (more only when its own is short), never the stock row, so
-- orders of one hot SKU do not all write one row. Read by primary key and
-- by SKU prefix (the operator's sum).
CREATE TABLE stock_shards (
    sku        TEXT    NOT NULL,
    shard      INTEGER NOT NULL,
    available  INTEGER NOT NULL,
    reserved   INTEGER NOT NULL,
    sold       INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (sku, shard)
) STRICT;

-- reservations.takes: JSON array of inventory.Take, the sub-rows a
-- reservation took units from (NULL: none, every unit is on stock rows).
ALTER TABLE reservations ADD COLUMN takes TEXT;
