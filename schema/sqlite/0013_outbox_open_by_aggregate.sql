-- outbox_aggregate (0004) held every row with its status, so each publish
-- moved the row's entry (a delete and an insert) and a row written already
-- published (the local in-transaction fast path) added an entry nothing
-- reads. Its two readers look only at an aggregate's open rows — pending,
-- and dead ones (a dead order event blocks the later ones of its order):
-- the sequence number a new row takes (one more than its aggregate's open
-- rows; order only matters among them, see EarliestPending) and
-- EarliestPending itself. A partial index of open rows in EarliestPending's
-- order serves both without a sort, and a publish now only removes an entry.
-- Queries name the statuses literally, as a partial index requires
-- (sqlite.org/partialindex.html).
DROP INDEX outbox_aggregate;
CREATE INDEX outbox_open_by_aggregate ON outbox (aggregate_id, aggregate_seq, created_at, id)
    WHERE status IN ('pending', 'dead');
