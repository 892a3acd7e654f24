package storetest

import (
	"context"
	"testing"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

func init() {
	outboxTests = append(outboxTests, subtest{"earliest_pending_dead_order_event_blocks", testDeadOrderEventBlocks})
}

// testDeadOrderEventBlocks: a dead row bound for order-events stays its
// aggregate's earliest blocking row, so a later event of the order never
// overtakes it (order.confirmed must not go out before a dead
// order.created that an operator redrives later); a discarded one no longer
// blocks; a dead saga command never blocks the saga's next command.
func testDeadOrderEventBlocks(t *testing.T, s store.Store) {
	base := window()
	mk := func(agg, dest string) outbox.Event {
		return outbox.Event{ID: newID("evt"), Shard: uniqueShard(), AggregateType: "order", AggregateID: agg,
			EventType: outbox.TypeOrderCreated, Destination: dest, Payload: []byte(`{}`),
			Metadata: map[string]string{}, Status: outbox.StatusPending, CreatedAt: sec(base, 1),
			NextAttemptAt: farFuture, Version: 1}
	}
	setStatus := func(id string, st outbox.Status) {
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
			e, err := tx.GetOutbox(ctx, id)
			if err != nil {
				return err
			}
			e.Status, e.Version = st, e.Version+1
			return tx.UpdateOutbox(ctx, e, e.Version-1)
		})
	}
	earliest := func(agg string) string {
		var got map[string]string
		mustView(t, s, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.EarliestPending(ctx, []string{agg})
			return err
		})
		return got[agg]
	}

	order := newID("agg-dead-event")
	created, confirmed := mk(order, outbox.DestOrderEvents), mk(order, outbox.DestOrderEvents)
	insertEvents(t, s, created)
	insertEvents(t, s, confirmed)
	retireEvents(t, s, created.ID, confirmed.ID)
	setStatus(created.ID, outbox.StatusDead)
	if got := earliest(order); got != created.ID {
		t.Fatalf("a dead order event: EarliestPending = %q, want the dead row %s (it must block %s)", got, created.ID, confirmed.ID)
	}
	setStatus(created.ID, outbox.StatusDiscarded)
	if got := earliest(order); got != confirmed.ID {
		t.Fatalf("after the dead row was discarded: EarliestPending = %q, want %s", got, confirmed.ID)
	}

	sagaAgg := newID("agg-dead-command")
	first, next := mk(sagaAgg, outbox.DestSagaCommands), mk(sagaAgg, outbox.DestSagaCommands)
	insertEvents(t, s, first)
	insertEvents(t, s, next)
	retireEvents(t, s, first.ID, next.ID)
	setStatus(first.ID, outbox.StatusDead)
	if got := earliest(sagaAgg); got != next.ID {
		t.Fatalf("a dead saga command: EarliestPending = %q, want the next command %s (commands never wait for a dead one)", got, next.ID)
	}
}
