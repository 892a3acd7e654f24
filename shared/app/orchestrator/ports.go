package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/domain/inventory"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Inventory is the stock participant (package stock implements it). It
// keeps its rows in the saga's own store, so its reservation and its sale
// run inside the step's save transaction.
type Inventory interface {
	// ReserveIn reserves lines for the saga inside tx, all or nothing: the
	// reservation commits or rolls back with tx. r is the saga's
	// reservation as stored in tx (when there is one); outcome is its
	// outcome: nil, Rejected (out of stock, or already released) or
	// Invalid; err is a store failure (tx fails). Idempotent by saga id (a
	// repeat returns the recorded outcome); safe for concurrent use.
	ReserveIn(ctx context.Context, tx store.Tx, sagaID, orderID string, lines []inventory.Line, now time.Time) (r inventory.Reservation, outcome, err error)
	// Release gives the saga's reserved stock back and reports whether the
	// saga had any reserved (true again on a repeat); a release before any
	// reservation blocks a later Reserve.
	// Errors: Invalid, Transient. Idempotent; safe for concurrent use.
	Release(ctx context.Context, sagaID string) (released bool, err error)
	// SettleIn sells the units reserved for the saga inside tx (the
	// confirm step's transaction: the order is confirmed and its stock sold
	// atomically). known is the reservation as an earlier transaction of
	// this invocation stored it, or nil to read it in tx. A settled
	// reservation is a repeat (nil); a missing one has nothing to sell
	// (nil); a released or rejected one cannot be sold (Invalid); any other
	// error fails tx.
	SettleIn(ctx context.Context, tx store.Tx, sagaID string, known *inventory.Reservation, now time.Time) error
}

// Payments is the payment participant (package payments implements it).
type Payments interface {
	// Charge charges the order's total once per saga. Errors: Rejected
	// (declined), Invalid, Transient (outcome unknown: call again).
	// Idempotent by saga id; safe for concurrent use.
	Charge(ctx context.Context, sagaID, orderID string, amountMinor int64, currency string) error
	// Refund returns the saga's charge, if any was made (even when the charge's
	// outcome was unknown), and reports whether money was returned. Errors:
	// Invalid (refused; permanent), Internal, Transient. Idempotent; safe for
	// concurrent use.
	Refund(ctx context.Context, sagaID, orderID string, amountMinor int64, currency string) (refunded bool, err error)
}

// Hooks observe the advancer for metrics. Every hook is optional, called
// synchronously after the transaction that recorded the fact committed.
type Hooks struct {
	// OnMessage counts every handled message by status (processed, stale, ...).
	OnMessage func(status Status)
	// OnStep counts every step or compensation execution by its outcome
	// (saga_steps_total{status}).
	OnStep func(step string, dir saga.Direction, outcome saga.Outcome)
	// OnCompensation counts compensation executions (compensations_total{step}).
	OnCompensation func(step string, outcome saga.Outcome)
	// OnFinished observes a saga reaching a final state (saga_duration_seconds{saga_type}).
	OnFinished func(sagaType string, state saga.State, took time.Duration)
	// OnDeadLetter counts sagas dead-lettered (dlq_additions_total{queue,error_type}).
	OnDeadLetter func(errorType string)
}

// Message is one delivered saga.advance message.
type Message struct {
	// EventID deduplicates deliveries in the inbox: the outbox event id (the
	// event_id attribute), or the queue message id when that is missing.
	EventID string
	// Body is the Command JSON.
	Body []byte
	// Attributes are the message attributes (the correlation chain).
	Attributes map[string]string
	// ReceiveCount is how many times the queue delivered the message (logged).
	ReceiveCount int
}

// Status is what the advancer did with a message. Every status but
// processed means the message was acknowledged without running anything.
type Status string

// Message statuses.
const (
	StatusProcessed = Status("processed") // one step or compensation ran and was saved
	StatusStale     = Status("stale")     // the message's token is not the saga's current one
	StatusUnknown   = Status("unknown")   // no such saga
	StatusFinished  = Status("finished")  // the saga already finished
	StatusBusy      = Status("busy")      // another advancer holds the saga's lease
	StatusDuplicate = Status("duplicate") // the inbox already has this message
	StatusLostLease = Status("lost_lease")
	StatusMalformed = Status("malformed") // not a valid saga command
)

// Result describes one handled message (logged and returned to the function).
type Result struct {
	Status    Status         `json:"status"`
	SagaID    string         `json:"saga_id,omitempty"`
	Step      string         `json:"step,omitempty"`
	Direction saga.Direction `json:"direction,omitempty"`
	Outcome   saga.Outcome   `json:"outcome,omitempty"`
	State     saga.State     `json:"state,omitempty"` // the saga's state afterwards
}
