// Package outbox defines the transactional outbox row: an event written in the
// same store transaction as the state change it announces, later published to
// a queue by the relay.
package outbox

import "time"

// Status of an outbox row.
type Status string

// Outbox statuses. A row is pending until the relay (or the request's fast
// path) publishes it; after the maximum attempts it becomes dead and a dead
// letter records why. A dead row is pending again when an operator redrives
// its dead letter, and discarded (never to be published) when the operator
// discards it.
//
// A dead or pending row blocks the later rows of its aggregate bound for
// order-events (store.OutboxRows.EarliestPending): consumers see an order's
// events in the order they were written, so order.confirmed never overtakes
// a dead order.created. Only a discarded row stops blocking. Rows bound for
// saga-commands never block on a dead row: their tokens make their order
// irrelevant, and a dead command must not wedge the saga's next one.
const (
	StatusPending   Status = "pending"
	StatusPublished Status = "published"
	StatusDead      Status = "dead"
	StatusDiscarded Status = "discarded"
)

// Destinations: logical queue names, mapped to queue URLs by configuration.
const (
	DestSagaCommands = "saga-commands"
	DestOrderEvents  = "order-events"
)

// Event types.
const (
	TypeSagaAdvance    = "saga.advance"
	TypeOrderCreated   = "order.created"
	TypeOrderConfirmed = "order.confirmed"
	TypeOrderCancelled = "order.cancelled"
	TypeOrderFailed    = "order.failed"
)

// Message attribute names every published message carries, so consumers can
// deduplicate and operators can follow the correlation chain.
const (
	AttrEventID        = "event_id"
	AttrEventType      = "event_type"
	AttrAggregateType  = "aggregate_type"
	AttrAggregateID    = "aggregate_id"
	AttrCorrelationID  = "correlation_id"
	AttrIdempotencyKey = "idempotency_key"
	AttrOrderID        = "order_id"
	AttrSagaID         = "saga_id"
)

// Event is one outbox row.
type Event struct {
	ID            string
	Shard         int
	AggregateType string
	AggregateID   string
	EventType     string
	Destination   string
	Payload       []byte            // JSON
	Metadata      map[string]string // correlation chain: correlation_id, idempotency_key, order_id, saga_id
	Status        Status
	Attempts      int
	NextAttemptAt time.Time
	LeaseOwner    string
	LeaseUntil    time.Time
	LastError     string
	CreatedAt     time.Time
	PublishedAt   time.Time
	Version       int64
}

// Attributes returns the message attributes the event is published with.
func (e Event) Attributes() map[string]string {
	a := map[string]string{
		AttrEventID:       e.ID,
		AttrEventType:     e.EventType,
		AttrAggregateType: e.AggregateType,
		AttrAggregateID:   e.AggregateID,
	}
	for _, k := range []string{AttrCorrelationID, AttrIdempotencyKey, AttrOrderID, AttrSagaID} {
		if v := e.Metadata[k]; v != "" {
			a[k] = v
		}
	}
	return a
}
