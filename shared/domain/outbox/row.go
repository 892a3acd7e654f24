package outbox

import (
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
)

// Row is what a writer knows of a new outbox row. Pending adds the
// bookkeeping every writer stores the same way: the aggregate's shard,
// status pending, the next attempt, version 1 and the dispatch lease.
type Row struct {
	ID            string
	AggregateType string
	AggregateID   string
	EventType     string
	Destination   string
	Payload       []byte
	Metadata      map[string]string
	// DueAt is when the row may be sent (zero: at once).
	DueAt time.Time
	// With Lease > 0 the row is leased to LeaseOwner for Lease: the writer
	// dispatches it itself right after commit (the fast path), and the
	// relay leaves it alone until the lease lapses.
	LeaseOwner string
	Lease      time.Duration
}

// Pending is r as a new pending row written at now into one of shards.
func (r Row) Pending(shards int, now time.Time) Event {
	e := Event{
		ID: r.ID, Shard: ShardOf(r.AggregateID, shards), AggregateType: r.AggregateType, AggregateID: r.AggregateID,
		EventType: r.EventType, Destination: r.Destination, Payload: r.Payload, Metadata: r.Metadata,
		Status: StatusPending, NextAttemptAt: r.DueAt, CreatedAt: now, Version: 1,
	}
	if e.NextAttemptAt.IsZero() {
		e.NextAttemptAt = now
	}
	if r.Lease > 0 {
		e.LeaseOwner, e.LeaseUntil = r.LeaseOwner, now.Add(r.Lease)
	}
	return e
}

// SagaAdvance is the saga-commands row carrying cmd.
func SagaAdvance(id string, cmd saga.Command, meta map[string]string) Row {
	return Row{ID: id, AggregateType: "saga", AggregateID: cmd.SagaID, EventType: TypeSagaAdvance,
		Destination: DestSagaCommands, Payload: cmd.Encode(), Metadata: meta}
}

// OrderEvent is the order-events row announcing o's status (eventType).
func OrderEvent(id, eventType string, o order.Order, meta map[string]string) (Row, error) {
	payload, err := order.EventPayload(o)
	if err != nil {
		return Row{}, err
	}
	return Row{ID: id, AggregateType: "order", AggregateID: o.ID, EventType: eventType,
		Destination: DestOrderEvents, Payload: payload, Metadata: meta}, nil
}

// ShardOf maps an aggregate id to an outbox shard (FNV-1a), so every row of
// one aggregate lands in one shard and keeps its order.
func ShardOf(aggregateID string, shards int) int {
	if shards <= 1 {
		return 0
	}
	var h uint32 = 2166136261
	for i := 0; i < len(aggregateID); i++ {
		h ^= uint32(aggregateID[i])
		h *= 16777619
	}
	return int(h % uint32(shards))
}
