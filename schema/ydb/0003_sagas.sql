-- Saga instances and their step log (package saga).
CREATE TABLE IF NOT EXISTS sagas (
    id              Utf8 NOT NULL,
    `type`          Utf8,
    state           Utf8,
    `data`          Json,      -- JSON saga.Data
    step            Int64,
    attempts        Int64,
    lease_owner     Utf8,
    lease_until     Timestamp,
    next_attempt_at Timestamp,
    last_error      Utf8,
    correlation_id  Utf8,
    created_at      Timestamp,
    updated_at      Timestamp,
    finished_at     Timestamp,
    version         Int64,
    -- ListSagasDue (recovery): state IN (pending, running, compensating) is
    -- three point prefixes, next_attempt_at <= $now a range within each, so
    -- finished sagas (the vast majority) are never read.
    INDEX idx_state_next GLOBAL SYNC ON (state, next_attempt_at),
    -- ListSagasByState (operators, reconciliation): one state, updated
    -- before a time, oldest first.
    INDEX idx_state_updated GLOBAL SYNC ON (state, updated_at),
    PRIMARY KEY (id)
);

-- No foreign key to sagas (YDB has none). ListSagaLog reads the primary-key
-- prefix saga_id, in seq order; no secondary index is needed.
CREATE TABLE IF NOT EXISTS saga_log (
    saga_id     Utf8 NOT NULL,
    seq         Int64 NOT NULL,
    step        Utf8,
    direction   Utf8,
    outcome     Utf8,
    attempt     Int64,
    `error`     Utf8,
    state_after Utf8,
    duration_ms Int64,
    `at`        Timestamp,
    message_id  Utf8,
    PRIMARY KEY (saga_id, seq)
);
