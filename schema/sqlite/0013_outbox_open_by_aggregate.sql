-- outbox_aggregate (0004) held every row with its status, so each publish
-- moved the row's entry (a delete and an insert) and a row written already
-- published (the local in-transaction fast path) added an entry nothing
-- reads. Its readers look only at an aggregate's open rows — pending, and
-- dead ones (a dead order event blocks the later ones of its order).
--
-- The order of an aggregate's rows is now their rowid's: the single writer
-- gives each new row the largest rowid yet, so rowids follow the order of
-- the writes (aggregate_seq of 0010 needed a look-up that SQLite compiled on
-- every insert, about three quarters of the insert's cost; rows numbered by
-- it have rowids in the same order). EarliestPending reads the open rows of
-- an aggregate from this partial index, whose entries end in the rowid, and
-- takes the first; a publish only removes an entry. Queries name the
-- statuses literally, as a partial index requires
-- (sqlite.org/partialindex.html).
DROP INDEX outbox_aggregate;
CREATE INDEX outbox_open_by_aggregate ON outbox (aggregate_id) WHERE status IN ('pending', 'dead');
