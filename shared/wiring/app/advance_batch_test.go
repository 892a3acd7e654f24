package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/app/jobs/sagabatch"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// deliveries receives the saga commands waiting in the queue as the
// sagaadvancer function gets them.
func (e *testEnv) deliveries(n int) []sagabatch.Delivery {
	e.t.Helper()
	var out []sagabatch.Delivery
	url := e.app.Config.QueueURLs.SagaCommands
	for len(out) < n {
		msgs, err := e.ports.Queue.Receive(context.Background(), url, queue.ReceiveOptions{Max: 10, Wait: time.Second})
		if err != nil || len(msgs) == 0 {
			e.t.Fatalf("receive: %d messages, err %v (want %d)", len(msgs), err, n)
		}
		for _, m := range msgs {
			out = append(out, sagabatch.Delivery{MessageID: m.MessageID, Message: orchestrator.Message{
				EventID: m.Attributes[outbox.AttrEventID], Body: []byte(m.Body), Attributes: m.Attributes}})
		}
	}
	return out
}

// A batch's sagas run concurrently (up to SAGA_BATCH_CONCURRENCY): the
// first transaction of three different sagas is reached by three
// goroutines at once, which a one-after-another loop never does (the barrier would wait
// forever). Results stay in batch order, and a second delivery of a saga's
// message runs after the first, so it is acknowledged, never an error.
func TestAdvanceSagasRunsABatchsSagasConcurrently(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) { c.Saga.BatchConcurrency = 3 })
	env.stocked("sku-1", 1000)
	for i := 0; i < 5; i++ {
		if r := env.do("POST", "/orders", "dev-user", fmt.Sprintf("batch-%d", i), []byte(orderBody)); r.status != 201 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
	}
	msgs := env.deliveries(5)
	msgs = append(msgs, msgs[0]) // the queue delivers the first one again

	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	env.beforeAdvancerTx(func() error {
		mu.Lock()
		arrived++
		if arrived == 3 {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
			return nil
		case <-time.After(20 * time.Second):
			return fmt.Errorf("only %d sagas in flight together", arrived)
		}
	})
	rep, err := env.app.Commands.AdvanceSagas.Run(context.Background(), "saga-commands", msgs)
	if err != nil {
		t.Fatalf("AdvanceSagas: %v", err)
	}
	if rep.Messages != 6 || rep.Failed != 0 || len(rep.Results) != 6 {
		t.Fatalf("report %+v", rep)
	}
	for i, m := range msgs {
		cmd, err := saga.DecodeCommand(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Results[i].SagaID != cmd.SagaID {
			t.Errorf("result %d is saga %s, its message's saga is %s", i, rep.Results[i].SagaID, cmd.SagaID)
		}
	}
	if s := rep.Results[5].Status; s == orchestrator.StatusProcessed || s == orchestrator.StatusLostLease {
		t.Errorf("the repeated delivery ran as %s: it must run after the first and be acknowledged as stale or duplicate", s)
	}
}
