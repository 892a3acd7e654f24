package orchestrator_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/transport/identity"
)

// TestChainedCrashResumesThroughTheRealRelay: the chaining
// guarantee of docs/saga.md with the real relay, the real fast path and the
// embedded queue instead of the harness's stand-ins. Several orders; the
// advancer is killed in the middle of a chain (after process_payment's
// effect, before its save) with its trigger message undeleted. The original
// message comes back after the visibility timeout and must do nothing; the
// relay must publish the chained command row left leased to the dead
// advancer once its lease lapses (and not before), and the saga must end
// CONFIRMED with one charge — without recovery running at all.
func TestChainedCrashResumesThroughTheRealRelay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	q, err := sqlitequeue.Open(filepath.Join(t.TempDir(), "queue.db"), sqlitequeue.Config{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close() })
	const visibility = 2 * time.Minute
	cmdURL, err := q.Ensure(ctx, queue.QueueSpec{Name: "saga-commands", VisibilityTimeout: visibility})
	if err != nil {
		t.Fatal(err)
	}
	evURL, err := q.Ensure(ctx, queue.QueueSpec{Name: "order-events", VisibilityTimeout: visibility})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rl := must(relay.New(relay.Config{Store: e.store, Queue: q, Owner: "relay-1", Lease: 30 * time.Second, MaxAttempts: 10,
		URLs:    map[string]string{outbox.DestSagaCommands: cmdURL, outbox.DestOrderEvents: evURL},
		Backoff: resilience.Backoff{Base: time.Second, Cap: time.Minute, Rand: resilience.NewRand(3)},
		Now:     e.clock.Now, NewID: e.adv.Config().NewID, Log: log}))(t)
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.Dispatcher = rl })
	e.orders = must(orders.New(orders.Config{Store: e.store, Dispatcher: rl, Now: e.clock.Now, NewID: e.adv.Config().NewID, Log: log}))(t)

	const n = 4
	var orderIDs []string
	for i := 0; i < n; i++ {
		resp, err := e.orders.Create(ctx, orders.CreateCommand{Caller: identity.Identity{Subject: "client-1"},
			Key: "chain-crash-" + string(rune('a'+i)), Request: order.Request{CustomerID: "cust-1", Currency: "RUB",
				Items: []order.Item{item("sku-1", 1, 100)}}})
		if err != nil {
			t.Fatal(err)
		}
		o := e.order(resp.OrderID)
		e.sagas = append(e.sagas, o.SagaID)
		e.orderOf[o.SagaID] = o.ID
		orderIDs = append(orderIDs, o.ID)
	}
	crashed := false
	e.afterStep = func(step string, _ saga.Direction) error {
		if step == saga.StepProcessPayment && !crashed {
			crashed = true
			return errCrash
		}
		return nil
	}
	stats := map[orchestrator.Status]int{}
	consume := func() int {
		msgs, err := q.Receive(ctx, cmdURL, queue.ReceiveOptions{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			res, err := e.adv.Handle(ctx, orchestrator.Message{EventID: m.Attributes[outbox.AttrEventID], Body: []byte(m.Body),
				Attributes: m.Attributes, ReceiveCount: m.ReceiveCount})
			if err != nil {
				continue // the process died: the message stays, invisible until the timeout
			}
			stats[res.Status]++
			if err := q.Delete(ctx, cmdURL, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		return len(msgs)
	}
	consume()
	if !crashed {
		t.Fatal("setup: no crash")
	}
	e.afterStep = nil
	if e.unfinished() != 1 {
		t.Fatalf("setup: %d unfinished, want the crashed one", e.unfinished())
	}
	// Before the lease lapses the relay must leave the chained row alone.
	if rep, err := rl.Run(ctx, time.Minute); err != nil || rep.Published != 0 {
		t.Fatalf("relay before the lease lapsed: %+v %v", rep, err)
	}
	// Time passes in 5 s ticks; the relay runs every tick, the trigger consumes.
	for tick := 0; e.unfinished() > 0; tick++ {
		if tick > 60 {
			t.Fatalf("the crashed saga never resumed: %+v", e.saga(e.sagas[0]))
		}
		e.clock.Advance(5 * time.Second)
		if _, err := rl.Run(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		consume()
	}
	e.clock.Advance(visibility)
	consume() // the original message of the crashed chain, redelivered
	if stats[orchestrator.StatusStale]+stats[orchestrator.StatusFinished] != 1 || stats[orchestrator.StatusProcessed] != n {
		t.Errorf("messages %v: want %d processed (%d healthy orders, the relayed row of the crashed one) and the redelivered original stale or finished", stats, n, n-1)
	}
	for _, id := range orderIDs {
		if o := e.order(id); o.Status != order.StatusConfirmed {
			t.Errorf("order %s %s", id, o.Status)
		}
	}
	if c := e.sim.Counters(); c.ChargedMinor != n*100 {
		t.Errorf("provider charged %d, want %d (one charge per order)", c.ChargedMinor, n*100)
	}
	e.checkInvariants()
}
