package store

import (
	"context"
	"time"

	"ordersaga/shared/domain/outbox"
)

// OutboxVersion names an outbox row and the version a batched write
// expects it to have (optimistic concurrency, as with UpdateOutbox).
type OutboxVersion struct {
	ID      string
	Version int64
}

// OutboxBatch is the relay's batched outbox work: one statement per batch
// instead of one conditional full-row update per row. Methods are plain
// conditional writes (no business rule); rows whose stored version is not
// the expected one, or that do not exist, are left alone and not counted.
// Errors: Transient and Internal, as for every method (see the package doc).
type OutboxBatch interface {
	// ListOutboxDueFrom is ListOutboxDue over every shard >= fromShard: the
	// relay's claim for its last configured shard, so rows stamped under a
	// larger OUTBOX_SHARDS than the current one are still claimed. Order
	// as ListOutboxDue.
	ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error)
	// LeaseOutbox sets lease_owner = owner and lease_until = until, and
	// increments the version, of each row at its expected version. It
	// returns how many rows changed. Idempotent per version.
	LeaseOutbox(ctx context.Context, rows []OutboxVersion, owner string, until time.Time) (int, error)
	// MarkOutboxPublished sets status published, published_at = at, clears
	// the lease and last_error, and increments the version, of each row at
	// its expected version (a row another relay took over is skipped). It
	// returns how many rows changed.
	MarkOutboxPublished(ctx context.Context, rows []OutboxVersion, at time.Time) (int, error)
	// DemoteOutbox takes the given pending rows out of ListOutboxDue's
	// results: the caller found each behind an earlier blocking row of its
	// aggregate (EarliestPending, in the same transaction). A row comes
	// back when it is its aggregate's first blocking row again (the store
	// sees to that when the earlier rows stop blocking). Rows already out,
	// not pending or missing are left alone. Idempotent. Not a version
	// change: a lease or mark of a demoted row still succeeds.
	DemoteOutbox(ctx context.Context, ids []string) error
}
