-- Transactional outbox (package outbox).
--
-- TTL: expire_at is set by the adapter when a row is stored as published
-- (published_at + the configured retention, default 7 days) and is NULL for
-- pending and dead rows, which therefore never expire. YDB deletes published
-- rows in the background; DeletePublishedOutbox remains for explicit purges.
-- expire_at is the only column without a twin in SQLite.
CREATE TABLE IF NOT EXISTS outbox (
    id              Utf8 NOT NULL,
    shard           Int64,
    aggregate_type  Utf8,
    aggregate_id    Utf8,
    event_type      Utf8,
    destination     Utf8,
    payload         String,    -- the message body (JSON), sent verbatim
    metadata        Json,      -- JSON object of strings (correlation chain)
    status          Utf8,
    attempts        Int64,
    next_attempt_at Timestamp,
    lease_owner     Utf8,
    lease_until     Timestamp,
    last_error      Utf8,
    created_at      Timestamp,
    published_at    Timestamp,
    version         Int64,
    expire_at       Timestamp, -- TTL column: NULL = keep
    -- ListOutboxDue (the relay's claim) and OutboxBacklog: the
    -- (status, shard) prefix reads only the pending rows of one shard, and
    -- next_attempt_at <= $now is a range within it.
    INDEX idx_status_shard_next GLOBAL SYNC ON (status, shard, next_attempt_at),
    -- EarliestPending: per-aggregate lookups of pending rows (aggregate_id
    -- IN $ids is a set of point prefixes), so events of one order are
    -- published in order.
    INDEX idx_aggregate GLOBAL SYNC ON (aggregate_id, status, created_at),
    -- DeletePublishedOutbox: published rows older than a time.
    INDEX idx_status_published GLOBAL SYNC ON (status, published_at),
    PRIMARY KEY (id)
)
WITH (TTL = Interval("PT0S") ON expire_at);
