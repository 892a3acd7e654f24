-- Operators' audit log (package dlq): append-only.
CREATE TABLE audit (
    id      TEXT    NOT NULL PRIMARY KEY,
    at      INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    params  BLOB,
    count   INTEGER NOT NULL,
    outcome TEXT    NOT NULL,
    detail  BLOB
) STRICT;

CREATE INDEX audit_at ON audit (at, id);
