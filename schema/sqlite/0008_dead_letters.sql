-- Dead letters (package dlq).
CREATE TABLE dead_letters (
    id              TEXT    NOT NULL PRIMARY KEY,
    source          TEXT    NOT NULL,
    source_ref      TEXT    NOT NULL,
    queue           TEXT    NOT NULL,
    payload         BLOB,
    attrs           TEXT    NOT NULL, -- JSON object of strings
    error_type      TEXT    NOT NULL,
    error           TEXT    NOT NULL,
    retry_count     INTEGER NOT NULL,
    first_failed_at INTEGER NOT NULL,
    last_failed_at  INTEGER NOT NULL,
    history         TEXT    NOT NULL, -- JSON array of dlq.Failure
    status          TEXT    NOT NULL,
    redrive_count   INTEGER NOT NULL,
    flagged         INTEGER NOT NULL, -- 0 or 1
    resolved_at     INTEGER NOT NULL,
    resolved_by     TEXT    NOT NULL,
    idempotency_key TEXT    NOT NULL,
    order_id        TEXT    NOT NULL,
    outbox_event_id TEXT    NOT NULL,
    saga_id         TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    version         INTEGER NOT NULL
) STRICT;

-- ListDeadLetters: keyset pages in (last_failed_at desc, id desc) order,
-- unfiltered or by status.
CREATE INDEX dead_letters_last_failed ON dead_letters (last_failed_at, id);
CREATE INDEX dead_letters_status ON dead_letters (status, last_failed_at);
-- FindDeadLetter.
CREATE INDEX dead_letters_source ON dead_letters (source, source_ref);
