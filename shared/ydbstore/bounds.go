package ydbstore

// ReadBound is what one list query may read, by its LIMIT and index, as the
// queries stand today (issue 12 items 3-5; docs/ydb.md "Rows read").
type ReadBound struct {
	Query string // the yql const
	Index string // the index or key range it reads
	Rows  string // the most rows it may read
}

// ReadBounds lists every list query (point reads by key read one row and
// are not listed). "unbounded" marks a query whose ORDER BY is an
// expression or whose filter is "$x IS NULL OR ...": YDB then reads the
// whole range before applying LIMIT (item 3, not fixed yet).
func ReadBounds() []ReadBound {
	return []ReadBound{
		{"yqlListOutboxDue", "idx_status_shard_next (status, shard) prefix", "unbounded: every pending row of the shard (ORDER BY expression)"},
		{"yqlPendingByAggregate", "idx_aggregate, aggregate_id IN (<= 500 ids)", "pending rows of those aggregates (a few each)"},
		{"yqlOutboxBacklog", "idx_status_shard_next (status) prefix", "unbounded: every pending row (COUNT)"},
		{"yqlListPublishedBefore", "idx_status_published (status) prefix", "unbounded: every published row before t (ORDER BY expression)"},
		{"yqlListExpiredIdem", "idx_expires range expires_at <= now", "LIMIT (index order)"},
		{"yqlListLockLapsedIdem", "idx_status_locked (status) prefix", "unbounded: in-progress keys (ORDER BY expression; few in practice)"},
		{"yqlListExpiredInbox", "idx_expires range expires_at <= now", "LIMIT (index order)"},
		{"yqlListSagasDue", "idx_state_next, 3 state prefixes", "unbounded: every due saga (ORDER BY expression)"},
		{"yqlListSagasByState", "idx_state_updated (state) prefix", "unbounded: every saga in the state, e.g. all completed ones (ORDER BY expression)"},
		{"yqlListSagaLog", "saga_log primary-key prefix saga_id", "one saga's steps (about 10)"},
		{"yqlListStock", "stock, whole table", "every SKU (operator view)"},
		{"yqlPaymentTotals", "payments, whole table", "every payment (invariant check only)"},
		{"yqlFindDeadLetter", "idx_source_ref (source, source_ref) prefix", "dead letters of one ref (few)"},
		{"yqlListDeadLettersByStatus", "idx_status_last_failed (status) prefix", "unbounded: ORDER BY expression"},
		{"yqlListDeadLetters", "dead_letters, whole table", "unbounded: whole table (optional filters)"},
		{"yqlListAudit", "audit, whole table", "unbounded: whole table sorted (ORDER BY expression)"},
	}
}
