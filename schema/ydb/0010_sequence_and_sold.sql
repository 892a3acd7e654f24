-- Per-aggregate event order without clocks (issue 13 item 7) and settled
-- stock (issue 13 item 8). One action per ALTER TABLE statement
-- (ydb/docs/en/core/yql/reference/syntax/alter_table: ADD COLUMN).
--
-- outbox.aggregate_seq: 1, 2, 3, ... per aggregate_id, assigned by the
-- INSERT itself inside the writing transaction (one more than the largest
-- stored for the aggregate, read through idx_aggregate, whose key starts
-- with aggregate_id: a point prefix holding the few rows of one order or
-- saga). Two transactions numbering the same aggregate conflict on that
-- read (serializable), so one is retried and takes the next number. The
-- order of an aggregate's events is then the order of the transactions
-- that wrote them, whatever the writers' clocks say. Updates never write
-- the column (UPSERT keeps unlisted columns). Rows written before this
-- migration keep NULL and are ordered first, by created_at, as before.
ALTER TABLE outbox ADD COLUMN aggregate_seq Int64;

-- stock.sold: units of confirmed orders (settled reservations). NULL on
-- rows written before this migration reads as 0.
ALTER TABLE stock ADD COLUMN sold Int64;
