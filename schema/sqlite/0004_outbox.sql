-- Transactional outbox (package outbox).
CREATE TABLE outbox (
    id              TEXT    NOT NULL PRIMARY KEY,
    shard           INTEGER NOT NULL,
    aggregate_type  TEXT    NOT NULL,
    aggregate_id    TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    destination     TEXT    NOT NULL,
    payload         BLOB,
    metadata        TEXT    NOT NULL, -- JSON object of strings
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    lease_owner     TEXT    NOT NULL,
    lease_until     INTEGER NOT NULL,
    last_error      TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    published_at    INTEGER NOT NULL,
    version         INTEGER NOT NULL
) STRICT;

-- ListOutboxDue (relay claim) and OutboxBacklog.
CREATE INDEX outbox_due ON outbox (status, shard, next_attempt_at, created_at);
-- EarliestPending: per-aggregate ordering.
CREATE INDEX outbox_aggregate ON outbox (aggregate_id, status, created_at);
-- DeletePublishedOutbox.
CREATE INDEX outbox_published ON outbox (status, published_at);
