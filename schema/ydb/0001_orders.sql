-- Orders (package order). Conventions for every table in this directory:
--   * primary-key columns are Utf8 NOT NULL. Ids are uuid strings; Utf8
--     rather than Uuid because Uuid primary keys on Yandex serverless YDB are
--     unconfirmed, the SQLite twin stores TEXT, and some keys are not uuids
--     (idempotency keys, SKUs, "<saga id>:<kind>" payment ids);
--   * every other column is nullable (YDB's default), so a later
--     ALTER TABLE ... ADD COLUMN never needs a default;
--   * times are Timestamp (UTC, microseconds, 1970-01-01 .. 2105-12-31).
--     NULL stands for Go's zero time.Time, which Timestamp cannot hold. As
--     in the SQLite twin the zero time is the earliest instant: an expiry
--     that is NULL never expires (and TTL never deletes the row), a NULL
--     lease is free, a NULL next attempt is due. Queries spell this out
--     ("x IS NULL OR x <= $now") and sort with "(x IS NOT NULL), x" rather
--     than rely on where YQL sorts NULLs;
--   * lists and maps the adapter encodes itself (order items, saga data,
--     metadata, reservation lines, dead-letter attrs and history) are Json:
--     always valid JSON, readable with JSON_VALUE in ad-hoc YQL, and
--     rejected by the server if an encoder bug ever wrote garbage;
--   * opaque payloads that must come back byte for byte (stored HTTP
--     responses, queue payloads, audit params/detail) are String: Json
--     would reject non-JSON bytes and JsonDocument re-encodes its input;
--   * integers are Int64 (money in minor units, counters, versions);
--   * column names that are (or may be) YQL keywords are always written in
--     backticks, here and in every query: `type`, `data`, `error`,
--     `source`, `queue`, `action`, `at`, `consumer`, `count`; their query
--     parameters are named $col_<name> (e.g. $col_type).
CREATE TABLE IF NOT EXISTS orders (
    id              Utf8 NOT NULL,
    owner_id        Utf8,
    customer_id     Utf8,
    saga_id         Utf8,
    status          Utf8,
    currency        Utf8,
    items           Json,      -- JSON array of order.Item
    total_minor     Int64,
    created_at      Timestamp,
    updated_at      Timestamp,
    version         Int64,
    idempotency_key Utf8,
    status_reason   Utf8,
    PRIMARY KEY (id)
);
