-- Per-aggregate event order without clocks (issue 13 item 7) and settled
-- stock (issue 13 item 8).
--
-- outbox.aggregate_seq: 1, 2, 3, ... per aggregate_id, assigned by
-- InsertOutbox inside the writing transaction (one more than the largest
-- stored for the aggregate), so the order of an aggregate's events is the
-- order of the transactions that wrote them, whatever the writers' clocks
-- say. EarliestPending orders by it. Rows written before this migration
-- keep NULL, which sorts first (they are older than any numbered row) and
-- are then ordered by created_at as before. The read uses the existing
-- outbox_aggregate index (aggregate_id prefix).
ALTER TABLE outbox ADD COLUMN aggregate_seq INTEGER;

-- stock.sold: units of confirmed orders. Confirming settles the order's
-- reservation in the same transaction: reserved -= q, sold += q. So
-- available + reserved + sold only changes when an operator sets stock.
ALTER TABLE stock ADD COLUMN sold INTEGER NOT NULL DEFAULT 0;
