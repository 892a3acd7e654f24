package ydbstore

// ReadBound is what one list query may read, by its LIMIT and index
// (issue 12 items 3-5; docs/ydb.md "Rows read").
type ReadBound struct {
	Query string // the yql const
	Index string // the index or key range it reads
	Rows  string // the most rows it may read
}

// ReadBounds lists every list query (point reads by key read one row and
// are not listed). A "branch" is one LIMITed SELECT of a key range read in
// index order (no ORDER BY expression, no "$x IS NULL OR" filter), so it
// stops after LIMIT matching rows; "+ leased" are rows in the range that a
// residual lease filter skips (the batches or sagas in flight right now).
func ReadBounds() []ReadBound {
	return []ReadBound{
		{"yqlListOutboxDue", "idx_status_shard_next (status, shard, NULL) + (status, shard, next <= now)", "2 branches: 2 x LIMIT + leased"},
		{"yqlListOutboxDueFrom", "as yqlListOutboxDue for the shard, + shards above it", "2 x LIMIT + leased, + LIMIT of the rows left in higher shards (only while a larger OUTBOX_SHARDS drains)"},
		{"yqlPendingByAggregate", "idx_aggregate, aggregate_id IN (<= 500 ids)", "pending rows of those aggregates (a few each)"},
		{"yqlOutboxBacklog", "idx_status_shard_next (status) prefix, LIMIT cap", "OutboxBacklogCap (1000) index rows + as many row lookups for created_at"},
		{"yqlListLockLapsedIdem", "idx_status_locked (status, NULL) + (status, locked <= now)", "2 branches: 2 x LIMIT"},
		{"yqlListSagasDue", "idx_state_next, 3 states x (NULL, next <= now)", "6 branches: 6 x LIMIT + leased"},
		{"yqlListSagasByState", "idx_state_updated (state, >= epoch) desc + (state, NULL)", "2 branches: 2 x LIMIT (the reconciler: LIMIT per finished state, not every finished saga)"},
		{"yqlListSagasByStateBefore", "idx_state_updated (state, < before) desc + (state, NULL)", "2 branches: 2 x LIMIT"},
		{"yqlListSagaLog", "saga_log primary-key prefix saga_id", "one saga's steps (about 10)"},
		{"yqlListStock", "stock, whole table", "every SKU (operator view)"},
		{"yqlPaymentTotals", "payments, whole table", "every payment (invariant check only)"},
		{"yqlFindDeadLetter", "idx_source_ref (source, source_ref) prefix", "dead letters of one ref (few)"},
		{"yqlListDeadLettersByStatus", "idx_status_last_failed (status) prefix", "not fixed: every dead letter of the status (ORDER BY expression, optional filters)"},
		{"yqlListDeadLetters", "dead_letters, whole table", "not fixed: whole table (optional filters)"},
		{"yqlListAudit", "audit, whole table", "not fixed: whole table sorted (ORDER BY expression)"},
	}
}
