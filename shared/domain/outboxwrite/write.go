// Package outboxwrite is the one outbox write path every writer uses (the
// order service, the advancer, recovery's resend and reconcile): it
// writes new outbox rows in the writer's store transaction — publishing
// them inside it where the queue can (the embedded queue sharing the
// SQLite file), inserting the rows otherwise (YDB with Message Queue) —
// and dispatches them after commit, bounded by one timeout.
//
// It also holds the two ports of that path, Dispatcher and TxPublisher, and
// Chain, the correlation metadata every row carries.
package outboxwrite

import (
	"cmp"
	"context"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Dispatcher publishes freshly committed outbox rows right away (the fast
// path; relay.Relay implements it). It is best effort and never fails: rows
// it could not publish stay pending for the relay. Safe for concurrent use.
type Dispatcher interface {
	Dispatch(ctx context.Context, events []outbox.Event)
}

// TxPublisher is a Dispatcher that can also publish rows inside the
// transaction that writes them (relay.Relay over the embedded queue sharing
// the store's file; see relay.Relay.PublishInTx): it returns the rows in
// the order given, those it sent marked published; it may mark the slice it
// is given (the Writer gives it a copy). Only the others are inserted: a
// message stored in the transaction is its own outbox entry. An error (the
// database failed under it) fails the transaction.
type TxPublisher interface {
	PublishInTx(ctx context.Context, tx store.Tx, events []outbox.Event) ([]outbox.Event, error)
}

// DefaultTimeout bounds the post-commit dispatch of every writer.
const DefaultTimeout = config.DefaultDispatchTimeout

// Writer writes outbox rows and dispatches them after commit. The zero
// Writer (no Dispatcher) only inserts rows: the relay alone publishes them.
// A Writer is a value, safe for concurrent use when its Dispatcher is.
type Writer struct {
	d    Dispatcher
	inTx TxPublisher // d, when it can publish inside the transaction
	wait time.Duration
}

// Config configures a Writer (New). Zero fields take the defaults named;
// a negative Timeout is refused.
type Config struct {
	// Dispatcher publishes rows after commit (nil: none, the relay alone
	// publishes them).
	Dispatcher Dispatcher
	// Timeout bounds each post-commit dispatch (default DefaultTimeout).
	Timeout time.Duration
}

// Validate reports what New would refuse: a negative Timeout. Errors are
// apperr.Invalid and name the field.
func (c Config) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "Timeout", c.Timeout)
	return p.Err("outboxwrite.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
}

// New is the Writer dispatching through cfg.Dispatcher within cfg.Timeout.
// Whether the Dispatcher publishes inside the transaction is decided here,
// once: it is a TxPublisher or it is not. It fails (apperr.Invalid, naming
// the field) on a negative Timeout.
func New(cfg Config) (Writer, error) {
	if err := cfg.Validate(); err != nil {
		return Writer{}, err
	}
	cfg.setDefaults()
	w := Writer{d: cfg.Dispatcher, wait: cfg.Timeout}
	if p, ok := cfg.Dispatcher.(TxPublisher); ok {
		w.inTx = p
	}
	return w, nil
}

// Dispatches reports whether the Writer has a Dispatcher (writers lease
// their rows for the fast path only then).
func (w Writer) Dispatches() bool { return w.d != nil }

// Write writes new outbox rows in tx and returns those the caller may
// dispatch itself after commit (Dispatch). A domain event (order-events)
// whose order already has a pending event (an older one that failed to send
// and is backing off) is written without a lease and left to the relay,
// which sends an aggregate's rows one at a time in creation order:
// dispatching it now would let order.confirmed overtake order.created. Saga
// commands are always dispatched: their order does not matter (the token
// makes stale ones harmless).
//
// With a TxPublisher, the leased rows — except the one named carried, a
// command the caller runs in place — are sent in tx and not inserted (the
// queue message, committed with the state change, is the outbox entry);
// they are still returned, for Dispatch to count after commit. events is
// not modified.
//
// Cost: one outbox read (EarliestPending) when events hold an order event,
// then one insert per row not sent in tx.
func (w Writer) Write(ctx context.Context, tx store.Tx, events []outbox.Event, carried string) ([]outbox.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var aggs []string
	for _, e := range events {
		if e.Destination == outbox.DestOrderEvents {
			aggs = append(aggs, e.AggregateID)
		}
	}
	older := map[string]string{}
	if len(aggs) > 0 {
		var err error
		if older, err = tx.EarliestPending(ctx, aggs); err != nil {
			return nil, err
		}
	}
	return w.write(ctx, tx, events, older, carried)
}

// WriteNew is Write for rows of aggregates created in tx: none of them can
// have an older pending row, so nothing is read.
func (w Writer) WriteNew(ctx context.Context, tx store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	return w.write(ctx, tx, events, nil, "")
}

func (w Writer) write(ctx context.Context, tx store.Tx, events []outbox.Event, older map[string]string, carried string) ([]outbox.Event, error) {
	rows := make([]outbox.Event, 0, len(events))
	var now []int // indexes in rows of those that may be published now
	for _, e := range events {
		if e.Destination == outbox.DestOrderEvents && older[e.AggregateID] != "" {
			e.LeaseOwner, e.LeaseUntil = "", time.Time{}
		} else if e.LeaseOwner != "" && e.ID != carried {
			now = append(now, len(rows))
		}
		rows = append(rows, e)
	}
	if w.inTx != nil && len(now) > 0 {
		pick := make([]outbox.Event, len(now))
		for j, i := range now {
			pick[j] = rows[i]
		}
		sent, err := w.inTx.PublishInTx(ctx, tx, pick)
		if err != nil {
			return nil, err
		}
		for j, e := range sent {
			rows[now[j]] = e
		}
	}
	dispatch := make([]outbox.Event, 0, len(rows))
	for _, e := range rows {
		if e.LeaseOwner != "" || e.Status == outbox.StatusPublished {
			dispatch = append(dispatch, e)
		}
		if e.Status == outbox.StatusPublished {
			continue // sent in tx: its queue message is its outbox entry
		}
		if err := tx.InsertOutbox(ctx, e); err != nil {
			return nil, err
		}
	}
	return dispatch, nil
}

// Dispatch publishes rows Write returned, after their transaction
// committed, within the Writer's timeout. Without a Dispatcher, or with no
// rows, it does nothing. Best effort: it never fails.
func (w Writer) Dispatch(ctx context.Context, events []outbox.Event) {
	if len(events) == 0 || w.d == nil {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, w.wait)
	defer cancel()
	w.d.Dispatch(dctx, events)
}

// Chain is the correlation metadata of an outbox row: correlationID and
// idempotencyKey of the cause, each falling back to fallback when empty,
// and the order and saga ids. Empty values are left out.
func Chain(correlationID, idempotencyKey, fallback, orderID, sagaID string) map[string]string {
	m := map[string]string{
		outbox.AttrCorrelationID:  firstOf(correlationID, fallback),
		outbox.AttrIdempotencyKey: firstOf(idempotencyKey, fallback),
		outbox.AttrOrderID:        orderID,
		outbox.AttrSagaID:         sagaID,
	}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
