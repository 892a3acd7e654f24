-- Saga instances and their step log (package saga).
CREATE TABLE sagas (
    id              TEXT    NOT NULL PRIMARY KEY,
    type            TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    data            TEXT    NOT NULL, -- JSON saga.Data
    step            INTEGER NOT NULL,
    attempts        INTEGER NOT NULL,
    lease_owner     TEXT    NOT NULL,
    lease_until     INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT    NOT NULL,
    correlation_id  TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    finished_at     INTEGER NOT NULL,
    version         INTEGER NOT NULL
) STRICT;

-- ListSagasDue: unfinished states, oldest next attempt first.
CREATE INDEX sagas_due ON sagas (state, next_attempt_at);
-- ListSagasByState: one state, oldest update first.
CREATE INDEX sagas_state_updated ON sagas (state, updated_at);

-- No foreign key to sagas: YDB has none, and the adapters must not drift.
CREATE TABLE saga_log (
    saga_id     TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    step        TEXT    NOT NULL,
    direction   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    error       TEXT    NOT NULL,
    state_after TEXT    NOT NULL,
    duration_ms INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    message_id  TEXT    NOT NULL,
    PRIMARY KEY (saga_id, seq)
) STRICT, WITHOUT ROWID;
