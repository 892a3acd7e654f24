package ydbstore

// ReadBound is what one list query may read, by its LIMIT and index
// (docs/ydb.md "Rows read").
type ReadBound struct {
	Query string // the yql const, or the q var of a built query
	Index string // the index or key range it reads
	Rows  string // the most rows it may read
}

// ReadBounds lists every list query (point reads by key read one row and
// are not listed). A "branch" is one LIMITed SELECT of a key range read in
// index order (no ORDER BY expression, no "$x IS NULL OR" filter), so it
// stops after LIMIT matching rows; "+ leased" are rows in the range that a
// residual lease filter skips (the batches or sagas in flight right now).
// "9 buckets" are bucket 0..7 and the NULL bucket (buckets.go): an empty
// branch is one key-range probe, so the bound is reached only when that
// many rows are due in every branch.
func ReadBounds() []ReadBound {
	return []ReadBound{
		{"qListOutboxDue", "idx_bucket_status_shard_head_next, 9 buckets x ((bucket, pending, shard, head, NULL) + (bucket, pending, shard, head, next <= now)); head = true, IS NULL in the NULL bucket", "18 branches: 18 x LIMIT + heads leased; rows behind their aggregate's head are outside every range"},
		{"qListOutboxDueFrom", "as qListOutboxDue for the shard, + 9 branches over the shards above it", "18 x LIMIT + heads leased, + 9 x LIMIT of the heads left in higher shards (only while a larger OUTBOX_SHARDS drains)"},
		{"yqlPendingByAggregate", "idx_aggregate, aggregate_id IN (<= 500 ids)", "pending rows of those aggregates (a few each)"},
		{"qOutboxBacklog", "idx_bucket_status_shard_head_next, 9 buckets x (bucket, pending) prefix, LIMIT cap each", "9 x OutboxBacklogCap (1000) index rows + as many row lookups for created_at, at most; the count is capped at OutboxBacklogCap"},
		{"qListLockLapsedIdem", "idx_bucket_status_locked, 9 buckets x ((bucket, status, NULL) + (bucket, status, locked <= now))", "18 branches: 18 x LIMIT"},
		{"qListSagasDue", "idx_bucket_state_next, 9 buckets x 3 states x (NULL, next <= now)", "54 branches: 54 x LIMIT + leased"},
		{"qListSagasByState", "idx_bucket_state_updated, 9 buckets x ((bucket, state, >= epoch) desc + (bucket, state, NULL))", "18 branches: 18 x LIMIT (the reconciler: LIMIT per finished state and bucket, not every finished saga)"},
		{"qCountSagasSince", "idx_bucket_state_updated, 9 buckets x (bucket, state, >= since) desc, the key only", "9 branches: 9 x LIMIT index entries, no row (the console's counts)"},
		{"qListSagasByStateBefore", "idx_bucket_state_updated, 9 buckets x ((bucket, state, < before) desc + (bucket, state, NULL))", "18 branches: 18 x LIMIT"},
		{"qListOrdersByCustomer", "idx_bucket_customer_created, 9 buckets x ((bucket, customer, >= epoch) desc + (bucket, customer, NULL))", "18 branches: 18 x LIMIT (the console's find by customer, first page)"},
		{"qListOrdersByCustomerAfter", "idx_bucket_customer_created, 9 buckets x ((bucket, customer, = after_at, id < after_id) desc + (bucket, customer, [epoch, after_at)) desc + (bucket, customer, NULL))", "27 branches: 27 x LIMIT (a later page)"},
		{"qListOrdersByCustomerAfterUndated", "idx_bucket_customer_created, 9 buckets x (bucket, customer, NULL, id < after_id) desc", "9 branches: 9 x LIMIT (a page among orders of the zero time)"},
		{"yqlListSagaLog", "saga_log primary-key prefix saga_id", "one saga's steps (about 10)"},
		{"yqlListStock", "stock, whole table", "every SKU (operator view)"},
		{"yqlListShards", "stock_shards primary-key prefix sku", "one SKU's sub-rows (at most inventory.MaxShards)"},
		{"yqlPaymentTotals", "payments, whole table", "every payment (invariant check only)"},
		{"yqlFindDeadLetter", "idx_source_ref (source, source_ref) prefix", "dead letters of one ref (few)"},
		{"deadLetterListYQL (status)", "idx_status_last_failed (status, [from, to), <= cursor) desc + (status, NULL)", "2 branches: 2 x (LIMIT+1) + ties at the cursor time; with a source, error type, order, saga or flagged filter, + the rows of the range that filter skips"},
		{"deadLetterListYQL (no status)", "idx_last_failed ([from, to), <= cursor) desc + (NULL)", "as with a status, over every status"},
		{"yqlListAudit", "idx_at (>= epoch) desc + (NULL)", "2 branches: 2 x LIMIT"},
	}
}

// builtQueries are the queries built at package initialisation from fixed
// fragments (bucketed), by the name ReadBounds and the tests use. The
// package's tests check each like a yql const; the dead-letter lists,
// built per filter shape, are enumerated by the tests over every shape.
func builtQueries() map[string]string {
	return map[string]string{
		"qListOutboxDue":                    qListOutboxDue,
		"qListOutboxDueFrom":                qListOutboxDueFrom,
		"qOutboxBacklog":                    qOutboxBacklog,
		"qListSagasDue":                     qListSagasDue,
		"qListSagasByState":                 qListSagasByState,
		"qListSagasByStateBefore":           qListSagasByStateBefore,
		"qCountSagasSince":                  qCountSagasSince,
		"qListOrdersByCustomer":             qListOrdersByCustomer,
		"qListOrdersByCustomerAfter":        qListOrdersByCustomerAfter,
		"qListOrdersByCustomerAfterUndated": qListOrdersByCustomerAfterUndated,
		"qListLockLapsedIdem":               qListLockLapsedIdem,
	}
}
