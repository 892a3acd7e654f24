-- Dead letters (package dlq). Nothing expires: entries stay until an audited
-- purge deletes them explicitly.
CREATE TABLE IF NOT EXISTS dead_letters (
    id              Utf8 NOT NULL,
    `source`        Utf8,
    source_ref      Utf8,
    `queue`         Utf8,
    payload         String,    -- the failed message body, verbatim
    attrs           Json,      -- JSON object of strings
    error_type      Utf8,
    `error`         Utf8,
    retry_count     Int64,
    first_failed_at Timestamp,
    last_failed_at  Timestamp,
    history         Json,      -- JSON array of dlq.Failure
    status          Utf8,
    redrive_count   Int64,
    flagged         Bool,
    resolved_at     Timestamp,
    resolved_by     Utf8,
    idempotency_key Utf8,
    order_id        Utf8,
    outbox_event_id Utf8,
    saga_id         Utf8,
    created_at      Timestamp,
    updated_at      Timestamp,
    version         Int64,
    -- ListDeadLetters with a status filter (the operators' usual view:
    -- open entries, newest failure first): reads one status only.
    -- Unfiltered listings scan the table, which stays small.
    INDEX idx_status_last_failed GLOBAL SYNC ON (status, last_failed_at),
    -- FindDeadLetter: has this outbox row / saga / message already been
    -- dead-lettered? A point lookup on (source, source_ref).
    INDEX idx_source_ref GLOBAL SYNC ON (`source`, source_ref),
    PRIMARY KEY (id)
);
