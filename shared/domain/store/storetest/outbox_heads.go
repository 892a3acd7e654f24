package storetest

import (
	"context"
	"testing"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

func init() {
	outboxTests = append(outboxTests, subtest{"due_list_holds_only_heads", testDueListHoldsOnlyHeads})
}

// testDueListHoldsOnlyHeads: ListOutboxDue returns an aggregate's first
// blocking row and never a row behind it, whatever holds the first one back
// (dead, backing off, leased), and the next row becomes a candidate when the
// first one stops blocking (published, discarded, a dead saga command). A
// row demoted because an earlier one was redriven comes back once that one
// is published.
func testDueListHoldsOnlyHeads(t *testing.T, s store.Store) {
	base, shard := window(), uniqueShard()
	now := sec(base, 100)
	var all []string
	add := func(agg, dest string) string {
		e := outbox.Event{ID: newID("evt"), Shard: shard, AggregateType: "order", AggregateID: agg,
			EventType: outbox.TypeOrderCreated, Destination: dest, Payload: []byte(`{}`),
			Metadata: map[string]string{}, Status: outbox.StatusPending, CreatedAt: sec(base, 1),
			NextAttemptAt: sec(base, 1), Version: 1}
		insertEvents(t, s, e)
		all = append(all, e.ID)
		return e.ID
	}
	change := func(id string, fn func(*outbox.Event)) {
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
			e, err := tx.GetOutbox(ctx, id)
			if err != nil {
				return err
			}
			fn(&e)
			e.Version++
			return tx.UpdateOutbox(ctx, e, e.Version-1)
		})
	}
	publish := func(id string) {
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
			e, err := tx.GetOutbox(ctx, id)
			if err != nil {
				return err
			}
			_, err = tx.MarkOutboxPublished(ctx, []store.OutboxVersion{{ID: id, Version: e.Version}}, now)
			return err
		})
	}
	due := func(want ...string) {
		t.Helper()
		mine := setOf(all...)
		mustView(t, s, func(ctx context.Context, tx store.Tx) error {
			got, err := tx.ListOutboxDue(ctx, shard, now, 1000)
			if err != nil {
				return err
			}
			if g := onlyMine(idsOf(got, outboxID), mine); !sameSet(g, want) {
				t.Errorf("ListOutboxDue = %v, want %v", g, want)
			}
			return nil
		})
	}

	a := newID("agg-heads")
	a1 := add(a, outbox.DestOrderEvents)
	a2 := add(a, outbox.DestOrderEvents)
	retireEvents(t, s, a1, a2)
	due(a1)
	change(a1, func(e *outbox.Event) { e.Status = outbox.StatusDead })
	due()
	change(a1, func(e *outbox.Event) { e.Status, e.NextAttemptAt = outbox.StatusPending, sec(base, 50) }) // redriven
	due(a1)
	publish(a1)
	due(a2)
	publish(a2)

	b := newID("agg-heads")
	b1 := add(b, outbox.DestOrderEvents)
	b2 := add(b, outbox.DestOrderEvents)
	retireEvents(t, s, b1, b2)
	change(b1, func(e *outbox.Event) { e.Attempts, e.NextAttemptAt = 1, farFuture }) // backing off
	due()
	change(b1, func(e *outbox.Event) { e.Status = outbox.StatusDead })
	change(b1, func(e *outbox.Event) { e.Status = outbox.StatusDiscarded })
	due(b2)
	publish(b2)

	c := newID("agg-heads")
	c1 := add(c, outbox.DestSagaCommands)
	c2 := add(c, outbox.DestSagaCommands)
	retireEvents(t, s, c1, c2)
	change(c1, func(e *outbox.Event) { e.LeaseOwner, e.LeaseUntil = "other", farFuture }) // leased
	due()
	change(c1, func(e *outbox.Event) { e.Status = outbox.StatusDead }) // a dead command blocks nothing
	due(c2)
	change(c1, func(e *outbox.Event) { e.Status, e.LeaseOwner, e.LeaseUntil = outbox.StatusPending, "", sec(base, 0) }) // redriven
	due(c1, c2)
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		first, err := tx.EarliestPending(ctx, []string{c})
		if err != nil || first[c] != c1 {
			t.Errorf("EarliestPending = %v, %v; want the redriven %s", first, err, c1)
		}
		return tx.DemoteOutbox(ctx, []string{c2, c2})
	})
	due(c1)
	publish(c1)
	due(c2)
	publish(c2)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := setOf(a...)
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}
