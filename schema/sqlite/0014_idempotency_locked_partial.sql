-- idempotency_keys_locked (0002) held every key, completed ones included,
-- but its only reader looks for keys in progress whose lock lapsed
-- (ListStaleIdempotencyKeys). A completed key — every key POST /orders
-- writes — now adds no entry. The reader names the status literally, as a
-- partial index requires (sqlite.org/partialindex.html).
DROP INDEX idempotency_keys_locked;
CREATE INDEX idempotency_keys_locked ON idempotency_keys (locked_until) WHERE status = 'in_progress';
