package orchestrator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

func TestHandleAcknowledgesWithoutWork(t *testing.T) {
	ctx := context.Background()
	msg := func(body string) orchestrator.Message {
		return orchestrator.Message{EventID: "ev-x", Body: []byte(body)}
	}
	t.Run("malformed and unknown", func(t *testing.T) {
		e := newEnv(t, envOpts{})
		for body, want := range map[string]orchestrator.Status{
			`not json`:                              orchestrator.StatusMalformed,
			`{"saga_id":"nope","reason":"created"}`: orchestrator.StatusUnknown,
		} {
			res, err := e.adv.Handle(ctx, msg(body))
			if err != nil || res.Status != want {
				t.Errorf("%s: got %+v, %v; want %s", body, res, err, want)
			}
		}
	})
	t.Run("stale, finished, busy", func(t *testing.T) {
		e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
		e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 }) // the per-message protocol: one step per delivered message
		_, sagaID := e.place(item("sku-1", 1, 10))
		first := e.queue[0].msg
		e.deliver(chaos{})
		if res, _ := e.adv.Handle(ctx, first); res.Status != orchestrator.StatusFinished {
			t.Errorf("old message for a finished saga: %+v", res)
		}
		_, sagaID = e.place(item("sku-1", 1, 10))
		first = e.queue[0].msg
		e.queue = nil
		if res, err := e.adv.Handle(ctx, first); err != nil || res.Status != orchestrator.StatusProcessed {
			t.Fatalf("first step: %+v %v", res, err)
		}
		if res, _ := e.adv.Handle(ctx, first); res.Status != orchestrator.StatusStale {
			t.Errorf("replayed first message: %+v, want stale", res)
		}
		next := e.disp.take()[0]
		nextMsg := orchestrator.Message{EventID: next.ID, Body: next.Payload, Attributes: next.Attributes()}
		leaseBy(t, e, sagaID, "someone-else", e.clock.Now().Add(time.Minute))
		if res, _ := e.adv.Handle(ctx, nextMsg); res.Status != orchestrator.StatusBusy {
			t.Errorf("leased saga: %+v, want busy", res)
		}
		e.clock.Advance(2 * time.Minute)
		if res, err := e.adv.Handle(ctx, nextMsg); err != nil || res.Status != orchestrator.StatusProcessed {
			t.Errorf("after the lease lapsed: %+v %v", res, err)
		}
	})
	t.Run("duplicate in the inbox releases the lease", func(t *testing.T) {
		e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
		_, sagaID := e.place(item("sku-1", 1, 10))
		m := e.queue[0].msg
		now := e.clock.Now()
		err := e.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertInbox(ctx, orchestrator.InboxConsumer, m.EventID, now, now.Add(time.Hour))
		})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := e.adv.Handle(ctx, m); err != nil || res.Status != orchestrator.StatusDuplicate {
			t.Fatalf("got %+v, %v; want duplicate", res, err)
		}
		if s := e.saga(sagaID); s.LeaseOwner != "" || len(e.trail(sagaID)) != 0 {
			t.Errorf("a duplicate must leave no lease and no log: %+v", s)
		}
	})
	t.Run("lost lease rolls the save back", func(t *testing.T) {
		// process_payment calls a participant, so it runs under the lease
		// (here taken by reserve_inventory's chained save); a usurper
		// between its effect and its save makes the save fail.
		e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
		_, sagaID := e.place(item("sku-1", 1, 10))
		e.afterStep = func(step string, _ saga.Direction) error {
			if step == saga.StepProcessPayment {
				leaseBy(t, e, sagaID, "usurper", e.clock.Now().Add(time.Minute))
			}
			return nil
		}
		res, err := e.adv.Handle(ctx, e.queue[0].msg)
		if err != nil || res.Status != orchestrator.StatusLostLease {
			t.Fatalf("got %+v, %v; want lost_lease", res, err)
		}
		s := e.saga(sagaID)
		if tr := e.trail(sagaID); s.LeaseOwner != "usurper" || s.Step != 2 || len(tr) != 2 {
			t.Errorf("the usurper's lease must stand and process_payment not be logged: %+v, log %v", s, tr)
		}
	})
	t.Run("an in-transaction first step leaves a taken lease alone", func(t *testing.T) {
		// create_order runs inside its save transaction, which checks the
		// lease itself (no lease transaction first): a saga leased by
		// another advancer is busy, and nothing is written.
		e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
		_, sagaID := e.place(item("sku-1", 1, 10))
		before := e.saga(sagaID)
		leaseBy(t, e, sagaID, "usurper", e.clock.Now().Add(time.Minute))
		res, err := e.adv.Handle(ctx, e.queue[0].msg)
		if err != nil || res.Status != orchestrator.StatusBusy {
			t.Fatalf("got %+v, %v; want busy", res, err)
		}
		if s := e.saga(sagaID); s.LeaseOwner != "usurper" || s.Version != before.Version+1 || len(e.trail(sagaID)) != 0 {
			t.Errorf("the usurper's lease must stand and nothing be written: %+v", s)
		}
	})
}

// leaseBy makes owner hold the saga's lease until until.
func leaseBy(t *testing.T, e *env, sagaID, owner string, until time.Time) {
	t.Helper()
	err := e.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		s, err := tx.GetSaga(ctx, sagaID)
		if err != nil {
			return err
		}
		prev := s.Version
		s.LeaseOwner, s.LeaseUntil, s.Version = owner, until, prev+1
		return tx.UpdateSaga(ctx, s, prev)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNextCommandRow checks the row a step writes: token, correlation
// chain, and the retry time of a backed-off step.
func TestNextCommandRow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
	e.fault = faultAt(saga.StepCreateOrder, saga.Forward, errTransient, 1)
	orderID, sagaID := e.place(item("sku-1", 1, 10))
	first := e.queue[0]
	start := e.clock.Now()
	if _, err := e.adv.Handle(ctx, first.msg); err != nil {
		t.Fatal(err)
	}
	rows := e.disp.take()
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	row := rows[0]
	cmd, err := saga.DecodeCommand(row.Payload)
	if err != nil || cmd != (saga.Command{SagaID: sagaID, Reason: "retry", State: saga.StateRunning, Step: 0, Attempt: 1}) {
		t.Errorf("command %+v, %v", cmd, err)
	}
	if row.EventType != outbox.TypeSagaAdvance || row.Destination != outbox.DestSagaCommands || row.AggregateID != sagaID {
		t.Errorf("row: %+v", row)
	}
	for k, want := range map[string]string{outbox.AttrOrderID: orderID, outbox.AttrSagaID: sagaID,
		outbox.AttrIdempotencyKey: "key-1", outbox.AttrCorrelationID: first.msg.Attributes[outbox.AttrCorrelationID]} {
		if row.Metadata[k] != want || want == "" {
			t.Errorf("metadata %s = %q, want %q", k, row.Metadata[k], want)
		}
	}
	if d := row.NextAttemptAt.Sub(start); d < 0 || d >= e.adv.Config().Backoff.Ceiling(0)+time.Second {
		t.Errorf("retry due in %v, want within the first backoff ceiling", d)
	}
	if s := e.saga(sagaID); !s.NextAttemptAt.Equal(row.NextAttemptAt.Truncate(time.Microsecond)) || s.Attempts != 1 || s.LastError == "" {
		t.Errorf("saga: %+v", s)
	}
}

// TestConcurrentDeliveriesRunOneStep hands one message to several advancers
// at once (a duplicate delivered to two function instances): exactly one
// runs the step; the others are told the saga is busy (or already moved on).
func TestConcurrentDeliveriesRunOneStep(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 5}})
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 }) // the per-message protocol: one step per delivered message
	_, sagaID := e.place(item("sku-1", 1, 10))
	e.deliver(chaos{}) // finish one saga so the next one's message is the reserve step
	_, sagaID = e.place(item("sku-1", 1, 10))
	first := e.queue[0].msg
	e.queue = nil
	if _, err := e.adv.Handle(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	next := e.disp.take()[0]
	m := orchestrator.Message{EventID: next.ID, Body: next.Payload, Attributes: next.Attributes()}
	const n = 6
	var wg sync.WaitGroup
	results := make([]orchestrator.Status, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := e.adv.Config() // same wiring, another instance
			c.Owner = fmt.Sprintf("instance-%d", i)
			c.Hooks = orchestrator.Hooks{}
			adv, err := orchestrator.NewAdvancer(c)
			if err != nil {
				errs[i] = err
				return
			}
			var res orchestrator.Result
			res, errs[i] = adv.Handle(context.Background(), m)
			results[i] = res.Status
		}(i)
	}
	wg.Wait()
	processed := 0
	for i, st := range results {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		switch st {
		case orchestrator.StatusProcessed:
			processed++
		case orchestrator.StatusBusy, orchestrator.StatusStale:
		default:
			t.Errorf("instance %d: status %s", i, st)
		}
	}
	if processed != 1 {
		t.Fatalf("%d instances ran the step, want 1 (%v)", processed, results)
	}
	if got := e.trail(sagaID); len(got) != 2 {
		t.Errorf("trail %v, want 2 lines", got)
	}
	if st := e.stockOf("sku-1"); st.Reserved+st.Sold != 2 || st.Available != 3 {
		t.Errorf("stock %+v: one reservation per saga", st)
	}
}
