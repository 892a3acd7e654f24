-- Stock per SKU and reservations per saga (package inventory). Both are read
-- by primary key only (ListStock reads the whole, small, stock table in key
-- order); no secondary index.
CREATE TABLE IF NOT EXISTS stock (
    sku        Utf8 NOT NULL,
    available  Int64,
    reserved   Int64,
    updated_at Timestamp,
    version    Int64,
    PRIMARY KEY (sku)
);

CREATE TABLE IF NOT EXISTS reservations (
    id         Utf8 NOT NULL, -- the saga id
    order_id   Utf8,
    lines      Json,          -- JSON array of inventory.Line
    status     Utf8,
    reason     Utf8,
    created_at Timestamp,
    updated_at Timestamp,
    version    Int64,
    PRIMARY KEY (id)
);
