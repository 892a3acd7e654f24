package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// chain is the correlation chain of rows written for inst: the incoming
// message's attributes where present, the saga's own ids otherwise.
func chain(inst saga.Instance, attrs map[string]string) map[string]string {
	m := map[string]string{
		outbox.AttrCorrelationID:  attrs[outbox.AttrCorrelationID],
		outbox.AttrIdempotencyKey: attrs[outbox.AttrIdempotencyKey],
		outbox.AttrOrderID:        inst.Data.OrderID,
		outbox.AttrSagaID:         inst.ID,
	}
	if m[outbox.AttrIdempotencyKey] == "" {
		m[outbox.AttrIdempotencyKey] = inst.CorrelationID
	}
	if m[outbox.AttrCorrelationID] == "" {
		m[outbox.AttrCorrelationID] = inst.CorrelationID
	}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
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

// insertEvents writes new outbox rows and returns those the caller may
// dispatch itself after commit. A domain event (order-events) whose order
// already has a pending event (an older one that failed to send and is
// backing off) is written without a lease and left to the relay, which sends
// an aggregate's rows one at a time in creation order: dispatching it now
// would let order.confirmed overtake order.created. Saga commands are always
// dispatched: their order does not matter (the token makes stale ones
// harmless), and the command being handled right now may not be marked
// published yet.
//
// When d can publish inside the transaction (TxPublisher), the rows to
// dispatch — except the one named carried, a command this advancer runs in
// place — are sent in tx and not inserted (the queue message, committed
// with the state change, is the outbox entry); they are still returned, for
// Dispatch to count after commit.
func insertEvents(ctx context.Context, tx store.Tx, events []outbox.Event, d Dispatcher, carried string) ([]outbox.Event, error) {
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
	if p, ok := d.(TxPublisher); ok && len(now) > 0 {
		pick := make([]outbox.Event, len(now))
		for j, i := range now {
			pick[j] = rows[i]
		}
		sent, err := p.PublishInTx(ctx, tx, pick)
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
