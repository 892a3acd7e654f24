-- Stock per SKU and reservations per saga (package inventory).
CREATE TABLE stock (
    sku        TEXT    NOT NULL PRIMARY KEY,
    available  INTEGER NOT NULL,
    reserved   INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version    INTEGER NOT NULL
) STRICT;

CREATE TABLE reservations (
    id         TEXT    NOT NULL PRIMARY KEY, -- the saga id
    order_id   TEXT    NOT NULL,
    lines      TEXT    NOT NULL, -- JSON array of inventory.Line
    status     TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version    INTEGER NOT NULL
) STRICT;
