package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/text"
)

// strictChecks are the strict checks (Options.Strict), each under its
// own name in Report.ViolationsBy.
func (c *checker) strictChecks() {
	for _, ck := range []struct {
		name string
		run  func()
	}{
		{"event-order", c.eventOrder},
		{"dead-letters-grow", c.deadLettersGrow},
		{"accepted-published", c.acceptedPublished},
		{"outage-cancel", c.outageCancel},
	} {
		c.name = ck.name
		ck.run()
	}
}

// finalRank orders an order's event types as the saga commits them.
var finalRank = map[string]int{
	outbox.TypeOrderCreated: 0, outbox.TypeOrderConfirmed: 1, outbox.TypeOrderCancelled: 1, outbox.TypeOrderFailed: 1,
}

// eventOrder: the events of one order arrive on order-events in the order
// they were committed — order.created first, then exactly one of confirmed,
// cancelled or failed. Commit order is the order of the event ids (every
// instance draws ids from one increasing counter, and one aggregate's
// events are written one transaction after another). Only first arrivals
// count: a later duplicate (at-least-once) is no reordering.
func (c *checker) eventOrder() {
	byID := map[string]outbox.Event{}
	for _, e := range slices.Concat(c.s.outbox, c.inTx) {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	last := map[string]outbox.Event{} // aggregate → last event that arrived first-time
	finals := map[string]string{}
	reported := map[string]bool{} // one violation per order
	for _, id := range c.s.eventsSeq {
		if seen[id] {
			continue
		}
		seen[id] = true
		e, ok := byID[id]
		if !ok || reported[e.AggregateID] {
			continue // unknown ids are reported by eventsPublished
		}
		n := len(c.out) + c.more
		if prev, ok := last[e.AggregateID]; ok && (id < prev.ID || finalRank[e.EventType] < finalRank[prev.EventType]) {
			c.fail("order %s: %s (%s, committed first) arrived on order-events after %s (%s)",
				e.AggregateID, e.EventType, e.ID, prev.EventType, prev.ID)
		} else if !ok && e.EventType != outbox.TypeOrderCreated {
			// the first arrival of this aggregate; order.created must come first
			if _, created := c.createdOf(e.AggregateID); created {
				c.fail("order %s: %s (%s) arrived on order-events before its order.created", e.AggregateID, e.EventType, e.ID)
			}
		}
		if finalRank[e.EventType] == 1 {
			if f, dup := finals[e.AggregateID]; dup && f != e.EventType {
				c.fail("order %s: both %s and %s arrived on order-events", e.AggregateID, f, e.EventType)
			}
			finals[e.AggregateID] = e.EventType
		}
		if prev, ok := last[e.AggregateID]; !ok || id > prev.ID {
			last[e.AggregateID] = e
		}
		if len(c.out)+c.more > n {
			reported[e.AggregateID] = true
		}
	}
}

// createdOf reports whether an order has an order.created row.
func (c *checker) createdOf(orderID string) (struct{}, bool) {
	return struct{}{}, c.events[orderID][outbox.TypeOrderCreated]
}

// deadLettersGrow: after a stalled drain, no unfinished saga's dead letters
// or unpublished commands kept growing while recovery ran (a saga recovery
// resends forever, each resend dead-lettered again or queued behind a
// dead row of its aggregate).
func (c *checker) deadLettersGrow() {
	for _, id := range sortedKeys(c.w.deadGrowth) {
		g := c.w.deadGrowth[id]
		if g[1] <= g[0] {
			continue
		}
		inst := c.s.sagas[id]
		c.fail("order %s stays %s (saga %s %s) while its dead letters and unpublished commands grow: %d → %d over 3 more recovery runs",
			inst.Data.OrderID, c.s.orders[inst.Data.OrderID].Status, id, inst.State, g[0], g[1])
	}
}

// acceptedPublished: every event of every order the API accepted was
// published — none of them dead (whatever the API accepts must be
// publishable), and order.created and the final event are on order-events.
func (c *checker) acceptedPublished() {
	byAgg := map[string][]outbox.Event{}
	for _, e := range slices.Concat(c.s.outbox, c.inTx) {
		byAgg[e.AggregateID] = append(byAgg[e.AggregateID], e)
	}
	for _, id := range c.s.orderIDs {
		o := c.s.orders[id]
		reported := false
		for _, e := range append(byAgg[id], byAgg[o.SagaID]...) {
			if e.Status == outbox.StatusDead {
				c.fail("order %s was accepted but its %s event %s is dead: %s", id, e.EventType, e.ID, text.Clip(e.LastError, 160))
				reported = true
				break
			}
		}
		if reported {
			continue
		}
		for _, e := range byAgg[id] {
			if e.Destination == outbox.DestOrderEvents && c.s.inEvents[e.ID] == 0 && (e.EventType == outbox.TypeOrderCreated || finalRank[e.EventType] == 1) {
				c.fail("order %s was accepted but its %s event %s never reached order-events (%s)", id, e.EventType, e.ID, e.Status)
				break
			}
		}
	}
}

// deadOfUnfinished counts, per unfinished saga, the dead letters that name
// it or its order, plus the outbox rows of the saga not yet published.
func (w *world) deadOfUnfinished(ctx context.Context) (map[string]int, error) {
	ids, err := w.ids(ctx, "dead_letters")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	err = w.sqlite.View(ctx, func(ctx context.Context, tx store.Tx) error {
		orderOf := map[string]string{}
		for _, st := range []saga.State{saga.StatePending, saga.StateRunning, saga.StateCompensating} {
			l, err := tx.ListSagasByState(ctx, st, time.Time{}, 10_000)
			if err != nil {
				return err
			}
			for _, inst := range l {
				out[inst.ID] = 0
				orderOf[inst.Data.OrderID] = inst.ID
			}
		}
		for _, id := range ids {
			d, err := tx.GetDeadLetter(ctx, id)
			if err != nil {
				return err
			}
			if _, ok := out[d.SagaID]; ok {
				out[d.SagaID]++
			} else if s, ok := orderOf[d.OrderID]; ok {
				out[s]++
			}
		}
		return nil
	})
	if err == nil {
		err = w.countUnpublished(ctx, out)
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: count dead letters: %w", err)
	}
	return out, nil
}

// countUnpublished adds to n, per saga id already in n, its outbox rows
// that are not published (pending or dead).
func (w *world) countUnpublished(ctx context.Context, n map[string]int) error {
	rows, err := w.sqlite.DB().QueryContext(ctx,
		"SELECT aggregate_id, count(*) FROM outbox WHERE status != 'published' GROUP BY aggregate_id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var k int
		if err := rows.Scan(&id, &k); err != nil {
			return err
		}
		if _, ok := n[id]; ok {
			n[id] += k
		}
	}
	return rows.Err()
}
