package chaos

import (
	"context"
	"fmt"
	"ordersaga/shared/app/orchestrator"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
)

// maxViolations bounds the violations listed (the rest are counted).
const maxViolations = 200

// checker judges a snapshot against the guarantees of architecture.md
// ("Delivery guarantees") and collects every violation, in a deterministic
// order (ids are visited sorted).
type checker struct {
	w    *world
	s    *snapshot
	out  []string
	more int
	// name is the check running now; by counts violations per check.
	name string
	by   map[string]int

	// Derived once.
	events     map[string]map[string]bool // aggregate id → event types with rows
	deadFor    map[string]bool            // "<source>/<ref>" → a dead letter exists
	committed  map[string]bool            // outbox ids
	orderOf    map[string]string          // idempotency key → order ids
	failedSaga map[string]bool
	// inTx are the events sent in their transaction, with no outbox row
	// (Options.InTx), in commit order.
	inTx []outbox.Event
}

func (c *checker) fail(format string, args ...any) {
	c.by[c.name]++
	if len(c.out) >= maxViolations {
		c.more++
		return
	}
	c.out = append(c.out, fmt.Sprintf(format, args...))
}

// finalStatus is the order status each final saga state implies.
var finalStatus = map[saga.State]order.Status{
	saga.StateCompleted: order.StatusConfirmed, saga.StateCompensated: order.StatusCancelled, saga.StateFailed: order.StatusFailed,
}

// finalEvent is the order event each final order status must have produced.
var finalEvent = map[order.Status]string{
	order.StatusConfirmed: outbox.TypeOrderConfirmed, order.StatusCancelled: outbox.TypeOrderCancelled, order.StatusFailed: outbox.TypeOrderFailed,
}

// check takes the final snapshot, runs every check and builds the report.
func (w *world) check(ctx context.Context) (Report, error) {
	left, err := w.leftover(ctx)
	if err != nil {
		return Report{}, err
	}
	s, err := w.snapshot(ctx)
	if err != nil {
		return Report{}, err
	}
	c := &checker{w: w, s: s, events: map[string]map[string]bool{}, deadFor: map[string]bool{},
		committed: map[string]bool{}, orderOf: map[string]string{}, failedSaga: map[string]bool{},
		by: map[string]int{}}
	c.name = "idempotency"
	c.index()
	c.name = "drain"
	switch {
	case w.stall != "":
		c.fail("the drain made no progress for %s of fake time: %s", stallRounds*drainStep, w.stall)
	case left != "":
		c.fail("the relay and recovery did not drain in %d rounds: %s", maxDrainRounds, left)
	}
	c.name = "stock"
	for _, v := range w.sampled {
		c.fail("%s", v)
	}
	for _, ck := range []struct {
		name string
		run  func()
	}{
		{"events", c.ordersHaveEvents}, {"published", c.eventsPublished}, {"sagas", c.sagasFinished},
		{"steps-once", c.stepsOnce}, {"stock", c.stockConserved}, {"stock-rows", c.rowsHoldTheirTakes}, {"money", c.moneyBalances},
		{"idempotency", c.idempotency},
	} {
		c.name = ck.name
		ck.run()
	}
	if w.opts.strict() {
		c.strictChecks()
	}
	if c.more > 0 {
		c.out = append(c.out, fmt.Sprintf("... and %d more violations", c.more))
	}
	r := w.report(s, c.out)
	r.ViolationsBy = c.by
	r.InTxSends, r.InTxEvents = w.inTx.get("in_tx_sends"), len(c.inTx)
	return r, nil
}

func (c *checker) index() {
	for _, e := range c.s.outbox {
		if c.events[e.AggregateID] == nil {
			c.events[e.AggregateID] = map[string]bool{}
		}
		c.events[e.AggregateID][e.EventType] = true
		c.committed[e.ID] = true
	}
	if c.w.opts.InTx {
		// What indexSent finds is counted under "published".
		prev := c.name
		c.name = "published"
		c.indexSent()
		c.name = prev
	}
	for _, d := range c.s.dead {
		c.deadFor[string(d.Source)+"/"+d.SourceRef] = true
		if d.Source == dlq.SourceQueue {
			// A message the queue moved to the DLQ, ingested by recovery.
			c.s.inDLQ[eventID(d.Attrs, d.SourceRef)]++
		}
	}
	for _, id := range c.s.orderIDs {
		o := c.s.orders[id]
		if prev, dup := c.orderOf[o.IdempotencyKey]; dup {
			c.fail("idempotency key %s created two orders: %s and %s", o.IdempotencyKey, prev, id)
			continue
		}
		c.orderOf[o.IdempotencyKey] = id
	}
	for _, id := range c.s.sagaIDs {
		if c.s.sagas[id].State == saga.StateFailed {
			c.failedSaga[id] = true
		}
	}
}

// ordersHaveEvents: no committed order without its saga and its events; no
// event for an order or saga that was not committed.
func (c *checker) ordersHaveEvents() {
	for _, id := range c.s.orderIDs {
		o := c.s.orders[id]
		inst, ok := c.s.sagas[o.SagaID]
		switch {
		case !ok:
			c.fail("order %s was committed without its saga %s", id, o.SagaID)
		case inst.Data.OrderID != id:
			c.fail("order %s names saga %s, which belongs to order %s", id, o.SagaID, inst.Data.OrderID)
		}
		if !c.events[o.SagaID][outbox.TypeSagaAdvance] && !c.finishedWithItsOrder(o.SagaID) {
			c.fail("order %s was committed without a saga.advance event", id)
		}
		if !c.events[id][outbox.TypeOrderCreated] {
			c.fail("order %s was committed without an order.created event", id)
		}
		if want, final := finalEvent[o.Status]; !final {
			c.fail("order %s is still %s", id, o.Status)
		} else if !c.events[id][want] {
			c.fail("order %s is %s but no %s event was written", id, o.Status, want)
		}
	}
	for _, e := range c.s.outbox {
		var exists bool
		switch e.AggregateType {
		case "saga":
			_, exists = c.s.sagas[e.AggregateID]
		case "order":
			_, exists = c.s.orders[e.AggregateID]
		}
		if !exists {
			c.fail("event %s (%s) is for %s %s, which was never committed", e.ID, e.EventType, e.AggregateType, e.AggregateID)
		}
	}
}

// finishedWithItsOrder reports whether a saga finished in the transaction
// that created its order (orchestrator.Start: its steps touched only the
// store, e.g. a reservation refused and the order cancelled), which writes
// no saga.advance: it is finished, and no line of its step log names a
// committed event (the lines of steps run there name commands never
// written).
func (c *checker) finishedWithItsOrder(sagaID string) bool {
	inst, ok := c.s.sagas[sagaID]
	if !ok || !inst.State.Finished() || len(c.s.logs[sagaID]) == 0 {
		return false
	}
	for _, l := range c.s.logs[sagaID] {
		if c.committed[l.MessageID] {
			return false
		}
	}
	return true
}

// eventsPublished: every event published at least once (and delivered: to
// the advancer, to the DLQ, or into order-events); dead rows have a dead
// letter; nothing was delivered that no transaction committed.
func (c *checker) eventsPublished() {
	// A saga command consumed in place by a chained step (orchestrator step
	// chaining) is marked published without being sent: its id is the
	// message id of that step's log line.
	consumed := map[string]bool{}
	for _, log := range c.s.logs {
		for _, l := range log {
			consumed[l.MessageID] = true
		}
	}
	for _, e := range c.s.outbox {
		switch e.Status {
		case outbox.StatusPending:
			c.fail("event %s (%s) is still pending after the drain (%d attempts)", e.ID, e.EventType, e.Attempts)
		case outbox.StatusDead:
			if !c.deadFor[string(dlq.SourceOutbox)+"/"+e.ID] {
				c.fail("event %s (%s) is dead without a dead letter", e.ID, e.EventType)
			}
		case outbox.StatusPublished:
			switch e.Destination {
			case outbox.DestSagaCommands:
				if c.w.delivered[e.ID] == 0 && c.s.inDLQ[e.ID] == 0 && !consumed[e.ID] {
					c.fail("event %s (saga.advance) was marked published but never reached the advancer or the DLQ", e.ID)
				}
			case outbox.DestOrderEvents:
				if c.s.inEvents[e.ID] == 0 {
					c.fail("event %s (%s) was marked published but is not in order-events", e.ID, e.EventType)
				}
			}
		}
	}
	c.inTxPublished()
	for _, q := range []struct {
		what string
		seen map[string]int
	}{{"the advancer", c.w.delivered}, {"the DLQ", c.s.inDLQ}, {"order-events", c.s.inEvents}} {
		for _, id := range sortedKeys(q.seen) {
			if !c.committed[id] {
				c.fail("a message for event %s reached %s, but no transaction committed that event (sent by %s)",
					id, q.what, c.w.origin.of(id))
			}
		}
	}
	if c.s.cmdLeft > 0 {
		c.fail("%d commands are still in saga-commands after the drain", c.s.cmdLeft)
	}
}

// sagasFinished: every saga completed, compensated, or failed with a dead
// letter; its order's status agrees; it belongs to a committed order.
func (c *checker) sagasFinished() {
	for _, id := range c.s.sagaIDs {
		inst := c.s.sagas[id]
		o, ok := c.s.orders[inst.Data.OrderID]
		if !ok {
			c.fail("saga %s belongs to order %s, which was never committed", id, inst.Data.OrderID)
		}
		if !inst.State.Finished() {
			c.fail("saga %s is still %s at step %d (%s)", id, inst.State, inst.Step, orchestrator.CreateOrderSaga.Table().StepName(inst))
			continue
		}
		if inst.State == saga.StateFailed && !c.deadFor[string(dlq.SourceSaga)+"/"+id] {
			c.fail("saga %s failed without a dead letter", id)
		}
		if ok && o.Status != finalStatus[inst.State] {
			c.fail("saga %s is %s but order %s is %s", id, inst.State, o.ID, o.Status)
		}
	}
}

// stepsOnce: no step or compensation took effect twice in any saga's log.
func (c *checker) stepsOnce() {
	for _, id := range c.s.sagaIDs {
		n := map[string]int{}
		for _, e := range c.s.logs[id] {
			if e.Outcome == saga.OutcomeSucceeded {
				n[e.Step+"/"+string(e.Direction)]++
			}
		}
		for _, k := range sortedKeys(n) {
			if n[k] > 1 {
				c.fail("saga %s: %s succeeded %d times", id, k, n[k])
			}
		}
	}
}
