-- Idempotency keys (package idempotency), keyed by caller scope and key.
--
-- TTL: a row is deleted by YDB's background TTL run once expires_at has
-- passed (deletion lags by up to an hour, so idempotency.Decide still checks
-- the expiry on read). NULL expires_at never expires.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope           Utf8 NOT NULL,
    idem_key        Utf8 NOT NULL,
    fingerprint     Utf8,
    status          Utf8,
    response_status Int64,
    response_body   String,    -- the stored response body, replayed verbatim
    location        Utf8,
    resource_id     Utf8,
    locked_until    Timestamp,
    created_at      Timestamp,
    expires_at      Timestamp,
    -- ListStaleIdempotencyKeys, "expired" half: a range read on
    -- expires_at <= $now instead of a full scan of a day of keys.
    INDEX idx_expires GLOBAL SYNC ON (expires_at),
    -- ListStaleIdempotencyKeys, "in progress with a lapsed lock" half: the
    -- status prefix narrows the read to in-progress keys (few), then
    -- locked_until is filtered within them.
    INDEX idx_status_locked GLOBAL SYNC ON (status, locked_until),
    PRIMARY KEY (scope, idem_key)
)
WITH (TTL = Interval("PT0S") ON expires_at);
