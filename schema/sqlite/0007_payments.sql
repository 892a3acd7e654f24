-- Payment ledger (package payment); id is "<saga id>:<kind>".
CREATE TABLE payments (
    id           TEXT    NOT NULL PRIMARY KEY,
    saga_id      TEXT    NOT NULL,
    order_id     TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    amount_minor INTEGER NOT NULL,
    currency     TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    reason       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

-- PaymentTotals.
CREATE INDEX payments_status_kind ON payments (status, kind);
