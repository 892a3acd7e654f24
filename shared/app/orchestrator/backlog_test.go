package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// tick makes every reading of the test clock by the advancer and recovery
// a millisecond later than the one before, as a real clock's readings are.
func (e *env) tick() {
	now := func() time.Time {
		e.clock.Advance(time.Millisecond)
		return e.clock.Now()
	}
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.Now = now })
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.Now = now })
}

// TestRecoveryWaitsOutABacklog: the sagas' commands wait in the queue far
// longer than MaxResends resends take (a backlog of three hours against
// a recovery that gives up after 3 resends a minute apart). Recovery
// resends them, more and more rarely, and fails none; once the backlog
// drains every order is confirmed, each step run once.
func TestRecoveryWaitsOutABacklog(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 3 })
	e.tick()
	var orders, sagas []string
	for range 3 {
		o, s := e.place(item("sku-1", 1, 100))
		orders, sagas = append(orders, o), append(sagas, s)
	}
	backlog := time.Duration(0)
	redriven := 0
	for backlog < 3*time.Hour {
		e.clock.Advance(time.Minute)
		backlog += time.Minute
		rep := e.runRecovery() // every command stays queued
		if rep.GaveUp != 0 {
			t.Fatalf("after a backlog of %s recovery gave up %d sagas: %+v", backlog, rep.GaveUp, rep)
		}
		redriven += rep.Resent
	}
	for _, id := range sagas {
		if s := e.saga(id); s.State.Finished() || s.Data.Resends != 0 {
			t.Fatalf("saga %s after the backlog: %s with %d counted resends, want unfinished and none counted", id, s.State, s.Data.Resends)
		}
	}
	// Without the backoff it would be one resend per saga and minute.
	t.Logf("%d resends per saga in a backlog of %s", redriven/len(sagas), backlog)
	if perSaga := redriven / len(sagas); perSaga < 2 || perSaga > 20 {
		t.Errorf("%d resends per saga in %s, want a few (resends of unconsumed commands back off)", perSaga, backlog)
	}
	if len(e.deadLetters()) != 0 {
		t.Fatal("a backlog must not dead-letter a saga")
	}
	e.deliver(chaos{}) // the backlog drains: the oldest commands first
	for _, o := range orders {
		if got := e.order(o).Status; got != order.StatusConfirmed {
			t.Errorf("order %s: %s, want CONFIRMED", o, got)
		}
	}
	if c := e.sim.Counters(); c.Charges != len(orders) {
		t.Errorf("provider charges %d, want %d", c.Charges, len(orders))
	}
	e.checkInvariants()
}

// TestRecoveryGivesUpOnLostCommandsAfterMaxWait: every command of a saga
// is lost. The resends are not counted (none is consumed), but the saga
// does not wait forever: once no command was consumed for MaxWait since the
// first became due, recovery fails it with a "stuck" dead letter — not
// before.
func TestRecoveryGivesUpOnLostCommandsAfterMaxWait(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	const maxWait = time.Hour
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 3; c.MaxWait = maxWait })
	e.tick()
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	due := e.saga(sagaID).NextAttemptAt
	e.queue = nil // the first command is lost
	redriven := 0
	var gaveUpAt time.Time
	for gaveUpAt.IsZero() && e.clock.Now().Sub(due) < 3*maxWait {
		e.clock.Advance(time.Minute)
		rep := e.runRecovery()
		e.queue = nil // and every resend
		redriven += rep.Resent
		if rep.GaveUp == 1 {
			gaveUpAt = e.clock.Now()
		}
	}
	if gaveUpAt.IsZero() {
		t.Fatalf("recovery never gave up on a saga whose commands are all lost (%d resends)", redriven)
	}
	t.Logf("gave up %s after the first command was due, after %d resends", gaveUpAt.Sub(due).Round(time.Second), redriven)
	if waited := gaveUpAt.Sub(due); waited < maxWait || waited > maxWait+20*time.Minute {
		t.Errorf("gave up %s after the command was due, want MaxWait (%s) plus at most one resend interval", waited, maxWait)
	}
	if redriven <= 3 {
		t.Errorf("%d resends: unconsumed resends must not count towards MaxResends (3)", redriven)
	}
	s := e.saga(sagaID)
	if s.State != saga.StateFailed || s.LastError == "" {
		t.Fatalf("saga %s %q, want failed with an error", s.State, s.LastError)
	}
	if o := e.order(orderID); o.Status != order.StatusFailed {
		t.Errorf("order %s, want FAILED", o.Status)
	}
	dls := e.deadLetters()
	if len(dls) != 1 || dls[0].ErrorType != orchestrator.ErrorTypeStuck || dls[0].Status != dlq.StatusOpen {
		t.Fatalf("dead letters %+v, want one open stuck entry", dls)
	}
	if rep := e.runRecovery(); rep.Resent+rep.GaveUp != 0 {
		t.Errorf("a given-up saga was touched again: %+v", rep)
	}
}

// TestRecoveryCountsConsumedRedrives: every command of the saga is
// consumed and its step kills the advancer (the lease lapses unsaved).
// Those resends count: recovery gives the saga up after MaxResends of
// them, long before MaxWait.
func TestRecoveryCountsConsumedRedrives(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 3 })
	e.tick()
	e.afterStep = func(step string, _ saga.Direction) error {
		if step == saga.StepProcessPayment {
			return errCrash
		}
		return nil
	}
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	start := e.clock.Now()
	redriven, gaveUp := 0, 0
	for pass := 0; pass < 20 && gaveUp == 0; pass++ {
		for len(e.queue) > 0 { // deliver: the step crashes, the message is lost with the process
			d := e.queue[0]
			e.queue = e.queue[1:]
			_, _ = e.adv.Handle(context.Background(), d.msg)
			e.pump()
		}
		e.clock.Advance(e.adv.Config().Lease + time.Second)
		rep := e.runRecovery()
		redriven += rep.Resent
		gaveUp += rep.GaveUp
	}
	if redriven != 3 || gaveUp != 1 {
		t.Fatalf("resent %d times and gave up %d times, want 3 and 1", redriven, gaveUp)
	}
	if took := e.clock.Now().Sub(start); took >= e.rec.Config().MaxWait {
		t.Errorf("gave up after %s, want well before MaxWait", took)
	}
	if o := e.order(orderID); o.Status != order.StatusFailed {
		t.Errorf("order %s, want FAILED", o.Status)
	}
	if s := e.saga(sagaID); s.State != saga.StateFailed {
		t.Errorf("saga %s, want failed", s.State)
	}
	// The step ran before each crash: the unit is reserved and the money
	// taken, and the dead letter says so.
	dls := e.deadLetters()
	if len(dls) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dls))
	}
	held, ok := dlq.HeldOf(dls[0])
	if !ok || len(held.Units) != 1 || held.Units[0].Quantity != 1 || held.Charge == nil || held.Charge.AmountMinor != 100 {
		t.Errorf("held %+v (charge %+v), want 1 unit of sku-1 and a charge of 100", held, held.Charge)
	}
}

// TestRecoveryCountsPoisonCommands: every command of the saga is received
// and kills its consumer before it takes the saga's lease, so the queue
// moves it to the dead-letter queue, and the ingest records a queue dead
// letter of the saga. Those commands were consumed: recovery counts the
// resends and gives the saga up after MaxResends of them, long before
// MaxWait.
func TestRecoveryCountsPoisonCommands(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.MaxResends = 2 })
	e.tick()
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	start := e.clock.Now()
	poison := func() { // each queued command dies in the queue and is ingested
		for _, d := range e.queue {
			e.clock.Advance(10 * time.Second)
			now := e.clock.Now()
			err := e.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
				_, err := dlq.Record(ctx, tx, dlq.DeadLetter{ID: "dl-" + d.msg.EventID, Source: dlq.SourceQueue, SourceRef: d.msg.EventID,
					Queue: "saga-commands", Payload: d.msg.Body, ErrorType: "max_receives_exceeded", Error: "poison",
					FirstFailedAt: now, LastFailedAt: now, Status: dlq.StatusOpen, SagaID: sagaID, OrderID: orderID,
					CreatedAt: now, UpdatedAt: now, Version: 1}, 0)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		e.queue = nil
	}
	redriven, gaveUp := 0, 0
	for pass := 0; pass < 60 && gaveUp == 0; pass++ {
		poison()
		e.clock.Advance(time.Minute)
		rep := e.runRecovery()
		redriven += rep.Resent
		gaveUp += rep.GaveUp
	}
	if gaveUp != 1 || redriven > 4 {
		t.Fatalf("resent %d times and gave up %d times, want at most 4 and 1", redriven, gaveUp)
	}
	if took := e.clock.Now().Sub(start); took > 15*time.Minute {
		t.Errorf("gave up after %s, want minutes", took)
	}
	if o := e.order(orderID); o.Status != order.StatusFailed {
		t.Errorf("order %s, want FAILED", o.Status)
	}
}
