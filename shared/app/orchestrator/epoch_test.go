package orchestrator_test

import (
	"context"
	"testing"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// TestRedriveMakesEveryOlderMessageStale: a saga's refund gives up and the
// saga fails; an operator redrives its dead letter. The redrive resumes
// compensating at the same step with attempt 0 — a token the saga had
// before — so without a new epoch an old at-least-once copy of the first
// compensate message would run the compensation again, and the redrive's
// own command would then find the lease taken. With the epoch the old copy
// is stale and the redrive's command carries the saga to its end.
func TestRedriveMakesEveryOlderMessageStale(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 }) // the per-message protocol: one step per delivered message
	refundFails := true
	refunds := 0
	e.fault = func(step string, dir saga.Direction) error {
		switch {
		case step == saga.StepProcessPayment:
			return apperr.New(apperr.Invalid, "provider refused the request")
		case step == saga.StepRefundPayment:
			refunds++
			if refundFails {
				return apperr.New(apperr.Transient, "refund unavailable")
			}
		}
		return nil
	}
	orderID, sagaID := e.place(item("sku-1", 1, 100))
	var oldCopy *orchestrator.Message
	for len(e.queue) > 0 {
		d := e.queue[0]
		e.queue = e.queue[1:]
		if cmd, _ := saga.DecodeCommand(d.msg.Body); oldCopy == nil && cmd.State == saga.StateCompensating && cmd.Attempt == 0 {
			m := d.msg
			oldCopy = &m // the queue will deliver this one again, much later
		}
		e.clock.AtLeast(d.due)
		if _, err := e.adv.Handle(ctx, d.msg); err != nil {
			t.Fatal(err)
		}
		e.pump()
	}
	if s := e.saga(sagaID); s.State != saga.StateFailed || oldCopy == nil {
		t.Fatalf("setup: saga %s, old copy %v", s.State, oldCopy != nil)
	}
	var dl dlq.DeadLetter
	e.view(func(ctx context.Context, tx store.Tx) error {
		list, _, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: dlq.SourceSaga}, dlq.Page{Limit: 10})
		if len(list) == 1 {
			dl = list[0]
		}
		return err
	})
	refundFails = false
	svc, err := redrive.New(redrive.Config{Store: e.store, Now: e.clock.Now, NewID: e.adv.Config().NewID})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Redrive(ctx, "operator", redrive.Selection{IDs: []string{dl.ID}})
	if err != nil || rep.Redriven != 1 {
		t.Fatalf("redrive: %+v %v", rep, err)
	}
	var cmdRow outbox.Event
	e.view(func(ctx context.Context, tx store.Tx) error {
		due, err := tx.ListOutboxDue(ctx, 0, e.clock.Now(), 100)
		for _, r := range due {
			if r.EventType == outbox.TypeSagaAdvance {
				cmdRow = r
			}
		}
		return err
	})
	if cmdRow.ID == "" {
		t.Fatal("the redrive wrote no saga command")
	}
	before := refunds
	// The old copy arrives first: it must be stale and run nothing.
	if res, err := e.adv.Handle(ctx, *oldCopy); err != nil || res.Status != orchestrator.StatusStale {
		t.Fatalf("old compensate copy after the redrive: %+v %v, want stale", res, err)
	}
	if refunds != before {
		t.Fatal("the old copy re-ran the refund")
	}
	res, err := e.adv.Handle(ctx, orchestrator.Message{EventID: cmdRow.ID, Body: cmdRow.Payload, Attributes: cmdRow.Attributes()})
	if err != nil || res.Status != orchestrator.StatusProcessed {
		t.Fatalf("the redrive's command: %+v %v, want processed", res, err)
	}
	e.pump()
	e.deliver(chaos{})
	if s := e.saga(sagaID); s.State != saga.StateCompensated {
		t.Errorf("saga %s, want compensated", s.State)
	}
	if o := e.order(orderID); o.Status != order.StatusCancelled && o.Status != order.StatusFailed {
		t.Errorf("order %s", o.Status)
	}
}
