-- Payment ledger (package payment); id is "<saga id>:<kind>".
--
-- No secondary index: rows are read by primary key, and PaymentTotals (an
-- invariant check for operators and tests) sums the succeeded rows, which
-- are nearly all rows, so an index on status would not save a read.
CREATE TABLE IF NOT EXISTS payments (
    id           Utf8 NOT NULL,
    saga_id      Utf8,
    order_id     Utf8,
    kind         Utf8,
    amount_minor Int64,
    currency     Utf8,
    status       Utf8,
    provider_ref Utf8,
    reason       Utf8,
    created_at   Timestamp,
    PRIMARY KEY (id)
);
