-- Consumer deduplication: one row per (consumer, message id) processed.
CREATE TABLE inbox (
    consumer     TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    processed_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    PRIMARY KEY (consumer, message_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX inbox_expires ON inbox (expires_at);
