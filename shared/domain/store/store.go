// Package store is the persistence port of ordersaga: a transaction owned by
// the adapter (Store.InTx runs a closure) and the table operations available
// inside it. Adapters (sqlitestore, ydbstore) implement it and must pass the
// conformance suite in package storetest.
//
// Business rules never live in adapters: every method is a plain read or a
// plain (conditional) write, so SQLite and YDB cannot drift apart.
//
// Error kinds (package apperr) every method may return:
//   - NotFound from Get* when the row does not exist;
//   - Conflict from Insert* when the primary key exists, and from Update* when
//     the row's Version is not the expected one (optimistic concurrency);
//   - Transient for lock conflicts, timeouts and overload (InTx retries these
//     itself a bounded number of times before returning them);
//   - Internal for anything else.
package store

import (
	"context"
	"database/sql"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// Store runs transactions. Implementations are safe for concurrent use.
type Store interface {
	// InTx runs fn in one serializable read-write transaction and commits if
	// fn returns nil. The adapter may run fn more than once when the
	// transaction hits a retryable conflict, so fn must be deterministic
	// given the data it reads and must do no outside I/O (no queue sends, no
	// HTTP calls). An error returned by fn rolls the transaction back and is
	// returned unchanged.
	InTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// View runs fn in a read-only transaction (a consistent snapshot). Writes
	// inside fn fail.
	View(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// Close releases the store's resources.
	Close() error
}

// Tx is everything a transaction can do. It is valid only inside the closure
// it was passed to and is not safe for concurrent use.
type Tx interface {
	OrderRows
	IdempotencyRows
	SagaRows
	OutboxRows
	OutboxBatch
	InboxRows
	StockRows
	PaymentRows
	DeadLetterRows
}

// OrderRows is the orders table.
type OrderRows interface {
	InsertOrder(ctx context.Context, o order.Order) error
	GetOrder(ctx context.Context, id string) (order.Order, error)
	// UpdateOrder writes o if the stored version equals expectedVersion.
	UpdateOrder(ctx context.Context, o order.Order, expectedVersion int64) error
	// ListOrdersByCustomer returns up to limit orders whose CustomerID is
	// customerID, newest CreatedAt first (the zero time last; ties: larger
	// ID first), starting after the cursor: only orders that come after
	// (after.CreatedAt, after.ID) in that order; the zero cursor starts at
	// the newest. The adapter reads an index of (customer, created_at), so
	// a page reads about limit rows however many orders the customer has.
	// limit <= 0 returns nothing. Read only; an unknown customer has no
	// orders (an empty list, not NotFound).
	ListOrdersByCustomer(ctx context.Context, customerID string, after OrderCursor, limit int) ([]order.Order, error)
}

// OrderCursor is where a page of ListOrdersByCustomer ended: the CreatedAt
// and ID of its last order. The zero cursor (ID "") means the first page.
type OrderCursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether c is the first page's cursor.
func (c OrderCursor) IsZero() bool { return c.ID == "" }

// CursorOf returns the cursor that continues after o.
func CursorOf(o order.Order) OrderCursor { return OrderCursor{CreatedAt: o.CreatedAt, ID: o.ID} }

// IdempotencyRows is the idempotency-keys table, keyed by (scope, key).
type IdempotencyRows interface {
	// InsertIdempotencyKey claims a key: it fails with Conflict when the key exists
	// (even if expired; use ReplaceIdempotencyKey to take over an expired key).
	InsertIdempotencyKey(ctx context.Context, r idempotency.Record) error
	GetIdempotencyKey(ctx context.Context, scope, key string) (idempotency.Record, error)
	// ReplaceIdempotencyKey overwrites the key only if its stored fingerprint,
	// status and expiry are those of prev (a conditional takeover); Conflict otherwise.
	ReplaceIdempotencyKey(ctx context.Context, r idempotency.Record, prev idempotency.Record) error
	// DeleteIdempotencyKey removes a key; deleting a missing key is not an error.
	DeleteIdempotencyKey(ctx context.Context, scope, key string) error
	// ListStaleIdempotencyKeys returns up to limit keys that are expired, or in
	// progress with a lapsed lock, at time now. An adapter whose database
	// expires keys itself (YDB's TTL) returns only the lapsed locks
	// (storetest Features.ExpiryByTTL); idempotency.Decide treats an
	// expired key as free either way.
	ListStaleIdempotencyKeys(ctx context.Context, now time.Time, limit int) ([]idempotency.Record, error)
}

// SagaRows is the saga instances table and its step log.
type SagaRows interface {
	InsertSaga(ctx context.Context, s saga.Instance) error
	GetSaga(ctx context.Context, id string) (saga.Instance, error)
	UpdateSaga(ctx context.Context, s saga.Instance, expectedVersion int64) error
	// ListSagasDue returns up to limit unfinished sagas (pending, running or
	// compensating) whose lease is free at now and whose NextAttemptAt <= now,
	// oldest NextAttemptAt first.
	ListSagasDue(ctx context.Context, now time.Time, limit int) ([]saga.Instance, error)
	// ListSagasByState returns up to limit sagas in state st updated before
	// updatedBefore (exclusive; zero = any time), newest update first (ties:
	// larger id first), so that reconciliation looks at recently finished sagas.
	ListSagasByState(ctx context.Context, st saga.State, updatedBefore time.Time, limit int) ([]saga.Instance, error)
	// CountSagasUpdatedSince counts the sagas in state st whose UpdatedAt
	// is at or after since, reading index entries of (state, updated_at)
	// and no saga row, at most limit of them: a count of limit means at
	// least limit. limit <= 0 counts nothing. Read only.
	CountSagasUpdatedSince(ctx context.Context, st saga.State, since time.Time, limit int) (int, error)
	// AppendSagaLog adds one step-log line; Conflict if (saga, seq) exists.
	AppendSagaLog(ctx context.Context, e saga.LogEntry) error
	// ListSagaLog returns a saga's step log in seq order.
	ListSagaLog(ctx context.Context, sagaID string) ([]saga.LogEntry, error)
}

// OutboxRows is the outbox table.
type OutboxRows interface {
	InsertOutbox(ctx context.Context, e outbox.Event) error
	GetOutbox(ctx context.Context, id string) (outbox.Event, error)
	// UpdateOutbox writes e if the stored version equals expectedVersion.
	UpdateOutbox(ctx context.Context, e outbox.Event, expectedVersion int64) error
	// ListOutboxDue returns up to limit pending rows of shard whose
	// NextAttemptAt <= now and whose lease is free at now, earliest
	// NextAttemptAt first (the zero time first), ties by ID: the order of
	// the due index, so an adapter reads about limit rows. It returns only
	// heads: the first blocking row of an aggregate (see EarliestPending)
	// is always among the candidates, a row written behind one is not, so
	// rows held back by a dead, backing-off or leased row never fill the
	// limit. A candidate may still have an earlier blocking row (a
	// redriven one); the caller checks EarliestPending and may DemoteOutbox
	// it. The adapter keeps the heads in the transactions that write the
	// outbox (InsertOutbox, UpdateOutbox, MarkOutboxPublished).
	ListOutboxDue(ctx context.Context, shard int, now time.Time, limit int) ([]outbox.Event, error)
	// EarliestPending returns, for each given aggregate id that has rows
	// still blocking its order, the id of the one written first: a pending
	// row, or a dead row bound for order-events (outbox.DestOrderEvents; see
	// outbox.StatusDiscarded), so a later event never overtakes a dead one.
	// "First" is the order of the transactions that wrote the rows, never
	// of CreatedAt (the writers' clocks may disagree); rows inserted in one
	// transaction keep their insertion order. The adapter keeps that order
	// at insert: YDB numbers an aggregate's rows 1, 2, 3, ... inside the
	// writing transaction; SQLite's single writer gives each new row the
	// largest rowid yet.
	EarliestPending(ctx context.Context, aggregateIDs []string) (map[string]string, error)
	// OutboxBacklog returns the number of pending rows and the CreatedAt of
	// the oldest. An adapter may cap the count to bound what it reads (YDB:
	// ydbstore.OutboxBacklogCap); a count at the cap means at least that
	// many, and oldest is then the oldest of the rows counted.
	OutboxBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
	// DeletePublishedOutbox deletes up to limit published rows published
	// before t. An adapter whose database expires published rows itself
	// (YDB's TTL) deletes nothing and returns 0 (storetest
	// Features.ExpiryByTTL).
	DeletePublishedOutbox(ctx context.Context, before time.Time, limit int) (int, error)
}

// InboxRows is the consumer deduplication table, keyed by (consumer, message id).
type InboxRows interface {
	// InsertInbox records that consumer processed messageID; Conflict if it already did.
	InsertInbox(ctx context.Context, consumer, messageID string, at, expiresAt time.Time) error
	// DeleteExpiredInbox deletes up to limit entries expired at now. An
	// adapter whose database expires entries itself (YDB's TTL) deletes
	// nothing and returns 0 (storetest Features.ExpiryByTTL).
	DeleteExpiredInbox(ctx context.Context, now time.Time, limit int) (int, error)
}

// StockRows is the stock and reservations tables.
type StockRows interface {
	GetStock(ctx context.Context, sku string) (inventory.Stock, error)
	// PutStock inserts or overwrites a SKU's stock if the stored version equals
	// expectedVersion (0 = the row must not exist).
	PutStock(ctx context.Context, s inventory.Stock, expectedVersion int64) error
	GetReservation(ctx context.Context, id string) (inventory.Reservation, error)
	InsertReservation(ctx context.Context, r inventory.Reservation) error
	UpdateReservation(ctx context.Context, r inventory.Reservation, expectedVersion int64) error
	// ListStock returns every SKU's stock ordered by SKU (operator and invariant checks).
	ListStock(ctx context.Context) ([]inventory.Stock, error)
	// GetStockShard returns one sub-row of a sharded SKU; NotFound if it
	// does not exist.
	GetStockShard(ctx context.Context, sku string, shard int64) (inventory.Shard, error)
	// PutStockShard inserts or overwrites a sub-row if the stored version
	// equals expectedVersion (0 = the sub-row must not exist): Conflict if
	// not, NotFound when expectedVersion > 0 and the sub-row is missing.
	PutStockShard(ctx context.Context, s inventory.Shard, expectedVersion int64) error
	// ListStockShards returns every sub-row of one SKU ordered by shard
	// number (all that exist, whatever the SKU's Shards says).
	ListStockShards(ctx context.Context, sku string) ([]inventory.Shard, error)
}

// PaymentRows is the payment ledger.
type PaymentRows interface {
	InsertPayment(ctx context.Context, e payment.Entry) error
	GetPayment(ctx context.Context, id string) (payment.Entry, error)
	// PaymentTotals returns the sums of succeeded charges and refunds.
	PaymentTotals(ctx context.Context) (charged, refunded int64, err error)
}

// DeadLetterRows is the dead-letter table and the operators' audit log.
type DeadLetterRows interface {
	InsertDeadLetter(ctx context.Context, d dlq.DeadLetter) error
	GetDeadLetter(ctx context.Context, id string) (dlq.DeadLetter, error)
	// FindDeadLetter returns the newest dead letter with this source and source
	// ref, or NotFound.
	FindDeadLetter(ctx context.Context, src dlq.Source, ref string) (dlq.DeadLetter, error)
	UpdateDeadLetter(ctx context.Context, d dlq.DeadLetter, expectedVersion int64) error
	// ListDeadLetters returns one page matching f, newest LastFailedAt first,
	// and the cursor of the next page ("" when there is none).
	ListDeadLetters(ctx context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error)
	// DeleteDeadLetter removes an entry for good (only the audited purge uses it).
	DeleteDeadLetter(ctx context.Context, id string) error
	InsertAudit(ctx context.Context, a dlq.AuditRecord) error
	// ListAudit returns up to limit audit records, newest first.
	ListAudit(ctx context.Context, limit int) ([]dlq.AuditRecord, error)
}

// KeyClaimer is implemented by the transactions of a store that can claim
// an idempotency key in one statement without failing when it exists (the
// SQLite store: INSERT … ON CONFLICT DO NOTHING). ClaimIdempotencyKey
// inserts r unless (r.Scope, r.Key) exists, in which case it writes nothing,
// and reports whether it inserted. A new order then costs no read of its
// key; a key that exists is read as before. Not on YDB, where an INSERT of
// an existing key fails the whole transaction at commit.
type KeyClaimer interface {
	ClaimIdempotencyKey(ctx context.Context, r idempotency.Record) (bool, error)
}

// SQLTx is implemented by the transactions of a store kept in a SQL
// database (the SQLite store). It lets an adapter that keeps its own tables
// in the same database — the embedded queue on the store's file — write
// inside the store's transaction, so its rows exist exactly when the
// store's rows do. SQLDB names the database handle the transaction runs on:
// an adapter must write through the transaction only when that is its own
// handle. Statements run as the store's own do (in a group transaction they
// are never interrupted half-way).
type SQLTx interface {
	SQLDB() *sql.DB
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
