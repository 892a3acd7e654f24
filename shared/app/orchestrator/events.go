package orchestrator

import (
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/saga"
)

// chain is the correlation chain of rows written for inst: the incoming
// message's attributes where present, the saga's own ids otherwise.
func chain(inst saga.Instance, attrs map[string]string) map[string]string {
	return outboxwrite.Chain(attrs[outbox.AttrCorrelationID], attrs[outbox.AttrIdempotencyKey],
		inst.CorrelationID, inst.Data.OrderID, inst.ID)
}

// newAdvanceEvent builds the outbox row of a saga.advance command due at
// nextAt. With lease > 0 the row is leased to owner so the relay leaves it
// to the fast-path dispatch for that long.
func newAdvanceEvent(id string, shards int, cmd saga.Command, meta map[string]string, nextAt, now time.Time, owner string, lease time.Duration) outbox.Event {
	r := outbox.SagaAdvance(id, cmd, meta)
	r.DueAt, r.LeaseOwner, r.Lease = nextAt, owner, lease
	return r.Pending(shards, now)
}

// newOrderEvent builds the order-events row announcing o's new status.
func newOrderEvent(id string, shards int, eventType string, o order.Order, meta map[string]string, now time.Time, owner string, lease time.Duration) (outbox.Event, error) {
	r, err := outbox.OrderEvent(id, eventType, o, meta)
	if err != nil {
		return outbox.Event{}, err
	}
	r.LeaseOwner, r.Lease = owner, lease
	return r.Pending(shards, now), nil
}
