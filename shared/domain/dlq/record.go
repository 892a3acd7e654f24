package dlq

import (
	"context"

	"ordersaga/shared/domain/apperr"
)

// MaxHistory is how many failures an entry keeps (the newest ones).
const MaxHistory = 20

// DefaultLoopLimit is the loop limit Record uses when given one <= 0: an
// entry redriven this many times that fails again is flagged.
const DefaultLoopLimit = 3

// Rows is the slice of the store's DeadLetterRows port that Record needs
// (the same method sets as store.DeadLetterRows; declared here because package
// store imports this one). A store.Tx satisfies it.
type Rows interface {
	// FindDeadLetter returns the newest entry with this source and source
	// ref; NotFound if none.
	FindDeadLetter(ctx context.Context, src Source, ref string) (DeadLetter, error)
	// InsertDeadLetter stores a new entry; Conflict if its id exists.
	InsertDeadLetter(ctx context.Context, d DeadLetter) error
	// UpdateDeadLetter stores d if the stored version is expectedVersion;
	// Conflict if it is not, NotFound if the entry is missing.
	UpdateDeadLetter(ctx context.Context, d DeadLetter, expectedVersion int64) error
}

// Record stores one failure of the work identified by (d.Source,
// d.SourceRef), inside the caller's transaction. Every writer of dead
// letters (the outbox relay, the saga advancer, queue DLQ ingestion) calls
// it, so that work that was redriven and fails again comes back to ITS
// entry, which is what the loop guard counts on.
//
// With no entry for (Source, SourceRef), d is inserted (defaults: Status
// open, Version 1, FirstFailedAt = LastFailedAt, History = one failure built
// from LastFailedAt, ErrorType and Error when empty). With an entry, that
// entry is updated instead (d.ID is then ignored): d's failures are appended
// to its History (only the newest MaxHistory are kept), RetryCount adds up,
// LastFailedAt, ErrorType and Error become d's, Payload, Attrs, Queue and the
// correlation fields take d's values when d has them, ResolvedAt/By are
// cleared, Status is open again and Flagged = RedriveCount >= loopLimit
// (DefaultLoopLimit when loopLimit <= 0). RedriveCount is never changed here:
// only a redrive increments it.
//
// Idempotent while the entry is open: when the entry is open and its newest
// failure has the same ErrorType and Error as d's newest, the call is a
// repeat (for example a queue ingestion that crashed after recording and
// before deleting the message) and the stored entry is returned unchanged.
// Writers make the error text of distinct failures distinct (queue ingestion
// names the message id).
//
// Errors: Invalid when d has no ID (insert), Source or SourceRef; otherwise
// those of the Rows (Conflict when a concurrent writer got there first:
// the transaction should be retried). Returns the entry as stored.
func Record(ctx context.Context, tx Rows, d DeadLetter, loopLimit int) (DeadLetter, error) {
	if d.Source == "" || d.SourceRef == "" {
		return DeadLetter{}, apperr.New(apperr.Invalid, "dead letter needs a source and a source ref")
	}
	if loopLimit <= 0 {
		loopLimit = DefaultLoopLimit
	}
	failures := d.History
	if len(failures) == 0 {
		failures = []Failure{{At: d.LastFailedAt, ErrorType: d.ErrorType, Error: d.Error}}
	}
	last := failures[len(failures)-1]
	if d.LastFailedAt.IsZero() {
		d.LastFailedAt = last.At
	}

	existing, err := tx.FindDeadLetter(ctx, d.Source, d.SourceRef)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return insert(ctx, tx, d, failures)
	case err != nil:
		return DeadLetter{}, err
	}
	if existing.Status == StatusOpen && len(existing.History) > 0 {
		prev := existing.History[len(existing.History)-1]
		if prev.ErrorType == last.ErrorType && prev.Error == last.Error {
			return existing, nil // the same failure recorded again
		}
	}
	e := merge(existing, d, failures, loopLimit)
	if err := tx.UpdateDeadLetter(ctx, e, existing.Version); err != nil {
		return DeadLetter{}, err
	}
	return e, nil
}

func insert(ctx context.Context, tx Rows, d DeadLetter, failures []Failure) (DeadLetter, error) {
	if d.ID == "" {
		return DeadLetter{}, apperr.New(apperr.Invalid, "dead letter needs an id")
	}
	if d.FirstFailedAt.IsZero() {
		d.FirstFailedAt = failures[0].At
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = d.LastFailedAt
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	if d.Status == "" {
		d.Status = StatusOpen
	}
	if d.Version == 0 {
		d.Version = 1
	}
	d.History = keepLast(append([]Failure(nil), failures...))
	if err := tx.InsertDeadLetter(ctx, d); err != nil {
		return DeadLetter{}, err
	}
	return d, nil
}

// merge folds the new failure d into the stored entry e.
func merge(e, d DeadLetter, failures []Failure, loopLimit int) DeadLetter {
	e.History = keepLast(append(append([]Failure(nil), e.History...), failures...))
	e.RetryCount += d.RetryCount
	e.LastFailedAt, e.ErrorType, e.Error = d.LastFailedAt, d.ErrorType, d.Error
	if e.FirstFailedAt.IsZero() {
		e.FirstFailedAt = d.FirstFailedAt
	}
	if len(d.Payload) > 0 {
		e.Payload = d.Payload
	}
	if len(d.Attrs) > 0 {
		e.Attrs = d.Attrs
	}
	e.Queue = orKeep(d.Queue, e.Queue)
	e.IdempotencyKey = orKeep(d.IdempotencyKey, e.IdempotencyKey)
	e.OrderID = orKeep(d.OrderID, e.OrderID)
	e.OutboxEventID = orKeep(d.OutboxEventID, e.OutboxEventID)
	e.SagaID = orKeep(d.SagaID, e.SagaID)
	e.Status = StatusOpen
	e.ResolvedAt, e.ResolvedBy = d.ResolvedAt, d.ResolvedBy // zero unless the writer says otherwise
	e.Flagged = e.RedriveCount >= loopLimit
	e.UpdatedAt = d.UpdatedAt
	if e.UpdatedAt.IsZero() {
		e.UpdatedAt = d.LastFailedAt
	}
	e.Version++
	return e
}

func keepLast(h []Failure) []Failure {
	if len(h) > MaxHistory {
		h = append([]Failure(nil), h[len(h)-MaxHistory:]...)
	}
	return h
}

func orKeep(v, keep string) string {
	if v != "" {
		return v
	}
	return keep
}
