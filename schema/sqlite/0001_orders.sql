-- Orders (package order). Conventions for every table in this directory:
--   * times are INTEGER unix microseconds UTC; the zero time.Time is stored as
--     its own unix-microsecond value (-62135596800000000), so every column is
--     NOT NULL and integer order equals time order (zero is the earliest);
--   * lists and maps are JSON TEXT, opaque payloads are BLOB;
--   * tables are STRICT, so a wrongly typed value fails instead of coercing;
--   * no table is prefixed queue_ (the embedded queue owns those names).
CREATE TABLE orders (
    id              TEXT    NOT NULL PRIMARY KEY,
    owner_id        TEXT    NOT NULL,
    customer_id     TEXT    NOT NULL,
    saga_id         TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    currency        TEXT    NOT NULL,
    items           TEXT    NOT NULL, -- JSON array of order.Item
    total_minor     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    idempotency_key TEXT    NOT NULL,
    status_reason   TEXT    NOT NULL
) STRICT;
