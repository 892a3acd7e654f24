-- Operators' audit log (package dlq): append-only, never expires. ListAudit
-- (newest first) sorts the whole table; it holds one row per operator
-- action, so no index is kept for it.
CREATE TABLE IF NOT EXISTS audit (
    id      Utf8 NOT NULL,
    `at`    Timestamp,
    actor   Utf8,
    `action` Utf8,
    params  String, -- the command, as JSON bytes
    `count` Int64,
    outcome Utf8,
    detail  String, -- the JSON report
    PRIMARY KEY (id)
);
