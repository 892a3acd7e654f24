-- Idempotency keys (package idempotency), keyed by caller scope and key.
CREATE TABLE idempotency_keys (
    scope           TEXT    NOT NULL,
    idem_key        TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    response_status INTEGER NOT NULL,
    response_body   BLOB,
    location        TEXT    NOT NULL,
    resource_id     TEXT    NOT NULL,
    locked_until    INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    PRIMARY KEY (scope, idem_key)
) STRICT, WITHOUT ROWID;

-- Cleanup of expired keys and of in-progress keys whose lock lapsed.
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
CREATE INDEX idempotency_keys_locked ON idempotency_keys (status, locked_until);
