-- Consumer deduplication: one row per (consumer, message id) processed.
--
-- TTL: YDB deletes an entry once expires_at has passed; NULL never expires.
CREATE TABLE IF NOT EXISTS inbox (
    `consumer`   Utf8 NOT NULL,
    message_id   Utf8 NOT NULL,
    processed_at Timestamp,
    expires_at   Timestamp,
    -- DeleteExpiredInbox: a range read on expires_at <= $now (the TTL does
    -- the same work in the background; the port keeps an explicit purge).
    INDEX idx_expires GLOBAL SYNC ON (expires_at),
    PRIMARY KEY (`consumer`, message_id)
)
WITH (TTL = Interval("PT0S") ON expires_at);
