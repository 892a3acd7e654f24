package orchestrator_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

func rep(line string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var (
	create  = []string{"create_order/forward/succeeded"}
	reserve = []string{"reserve_inventory/forward/succeeded"}
	pay     = []string{"process_payment/forward/succeeded"}
	confirm = []string{"confirm_order/forward/succeeded"}
	release = []string{"release_inventory/compensate/succeeded"}
	refund  = []string{"refund_payment/compensate/succeeded"}
	cancel  = []string{"cancel_order/compensate/succeeded"}
)

func TestHappyPath(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10, "sku-2": 5}})
	orderID, sagaID := e.place(item("sku-1", 2, 500), item("sku-2", 1, 250))
	e.deliver(chaos{})

	if o := e.order(orderID); o.Status != order.StatusConfirmed {
		t.Fatalf("order %s, want CONFIRMED", o.Status)
	}
	s := e.saga(sagaID)
	if s.State != saga.StateCompleted || s.Step != len(orchestrator.CreateOrderSaga) || s.FinishedAt.IsZero() || s.LeaseOwner != "" {
		t.Errorf("saga: %+v", s)
	}
	if got, want := e.trail(sagaID), concat(create, reserve, pay, confirm); !reflect.DeepEqual(got, want) {
		t.Errorf("trail:\n got %v\nwant %v", got, want)
	}
	if c, r := e.totals(); c != 1250 || r != 0 {
		t.Errorf("ledger %d/%d, want 1250/0", c, r)
	}
	if st := e.stockOf("sku-1"); st.Available != 8 || st.Reserved != 0 || st.Sold != 2 {
		t.Errorf("sku-1: %+v", st)
	}
	if n := e.disp.count(outbox.TypeOrderConfirmed); n != 1 {
		t.Errorf("%d order.confirmed events, want 1", n)
	}
	// Step chaining: the first message carries the saga through all four
	// steps in one invocation.
	if e.stats[orchestrator.StatusProcessed] != 1 || len(e.stats) != 1 {
		t.Errorf("message statuses: %v, want one processed message for the whole saga", e.stats)
	}
	e.checkInvariants()
}

func TestFailureAtEveryStepCompensatesExactly(t *testing.T) {
	retries := func(step string, n int) []string { return rep(step+"/forward/retry", n) }
	tests := []struct {
		name       string
		sku        string
		price      int64
		sim        paymentsim.Config
		provider   func(*paymentsim.Sim) payments.Provider
		fault      func(string, saga.Direction) error
		wantTrail  []string
		wantOrder  order.Status
		wantSaga   saga.State
		wantReason string
		charged    int64
		refunded   int64
	}{
		{name: "out of stock", sku: "sku-out", price: 100,
			wantTrail: concat(create, []string{"reserve_inventory/forward/failed"}, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, wantReason: "reserve_inventory: out of stock: sku-out"},
		{name: "payment declined", sku: "sku-1", price: 2_000_000,
			wantTrail: concat(create, reserve, []string{"process_payment/forward/failed"}, release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, wantReason: "process_payment: payment declined"},
		{name: "payment unavailable forever", sku: "sku-1", price: 100,
			fault: faultAt(saga.StepProcessPayment, saga.Forward, errTransient, -1),
			wantTrail: concat(create, reserve, retries("process_payment", 4), []string{"process_payment/forward/held", "process_payment/forward/failed",
				"refund_payment/compensate/skipped"}, release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, wantReason: "gave up after 5 attempts"},
		{name: "payment answer lost every time: the refund returns the money", sku: "sku-1", price: 100,
			provider: func(sim *paymentsim.Sim) payments.Provider {
				return &lossyCharges{Sim: sim, lose: func(string) bool { return true }}
			},
			wantTrail: concat(create, reserve, retries("process_payment", 4), []string{"process_payment/forward/held", "process_payment/forward/failed"},
				refund, release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, charged: 200, refunded: 200},
		{name: "reservation unavailable forever", sku: "sku-1", price: 100,
			fault: faultAt(saga.StepReserveInventory, saga.Forward, errTransient, -1),
			wantTrail: concat(create, retries("reserve_inventory", 4), []string{"reserve_inventory/forward/failed",
				"release_inventory/compensate/skipped"}, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated},
		{name: "transient payment failures then success", sku: "sku-1", price: 100,
			fault:     faultAt(saga.StepProcessPayment, saga.Forward, errTransient, 2),
			wantTrail: concat(create, reserve, retries("process_payment", 2), pay, confirm),
			wantOrder: order.StatusConfirmed, wantSaga: saga.StateCompleted, charged: 200},
		{name: "confirm refused", sku: "sku-1", price: 100,
			fault:     faultAt(saga.StepConfirmOrder, saga.Forward, errRejected, -1),
			wantTrail: concat(create, reserve, pay, []string{"confirm_order/forward/failed"}, refund, release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, charged: 200, refunded: 200},
		{name: "confirm unavailable forever", sku: "sku-1", price: 100,
			fault: faultAt(saga.StepConfirmOrder, saga.Forward, errTransient, -1),
			wantTrail: concat(create, reserve, pay, retries("confirm_order", 4), []string{"confirm_order/forward/failed",
				"cancel_order/compensate/skipped"}, refund, release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated, charged: 200, refunded: 200},
		{name: "create refused", sku: "sku-1", price: 100,
			fault:     faultAt(saga.StepCreateOrder, saga.Forward, apperr.New(apperr.Invalid, "bad order"), -1),
			wantTrail: []string{"create_order/forward/failed", "cancel_order/compensate/succeeded"},
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated},
		{name: "compensation retried then succeeds", sku: "sku-1", price: 2_000_000,
			fault: faultAt(saga.StepReleaseInventory, saga.Compensate, errTransient, 3),
			wantTrail: concat(create, reserve, []string{"process_payment/forward/failed"},
				rep("release_inventory/compensate/retry", 3), release, cancel),
			wantOrder: order.StatusCancelled, wantSaga: saga.StateCompensated},
		{name: "compensation keeps failing", sku: "sku-1", price: 2_000_000,
			fault: faultAt(saga.StepReleaseInventory, saga.Compensate, errTransient, -1),
			wantTrail: concat(create, reserve, []string{"process_payment/forward/failed"},
				rep("release_inventory/compensate/retry", 9), []string{"release_inventory/compensate/held", "release_inventory/compensate/gave_up"}),
			wantOrder: order.StatusFailed, wantSaga: saga.StateFailed},
		{name: "provider down for charge and refund", sku: "sku-1", price: 100, sim: paymentsim.Config{FailureRate: 1},
			wantTrail: concat(create, reserve, retries("process_payment", 4), []string{"process_payment/forward/held", "process_payment/forward/failed"},
				rep("refund_payment/compensate/retry", 9), []string{"refund_payment/compensate/held", "refund_payment/compensate/gave_up"}, release),
			wantOrder: order.StatusFailed, wantSaga: saga.StateFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10, "sku-out": 0}, sim: tc.sim})
			e.fault = tc.fault
			if tc.provider != nil {
				e.payVia.Provider = tc.provider(e.sim)
			}
			orderID, sagaID := e.place(item(tc.sku, 2, tc.price))
			e.deliver(chaos{})

			if got := heldTrail(e.trail(sagaID)); !reflect.DeepEqual(got, tc.wantTrail) {
				t.Errorf("trail:\n got %v\nwant %v", got, tc.wantTrail)
			}
			o, s := e.order(orderID), e.saga(sagaID)
			if o.Status != tc.wantOrder || s.State != tc.wantSaga {
				t.Fatalf("order %s / saga %s, want %s / %s", o.Status, s.State, tc.wantOrder, tc.wantSaga)
			}
			if !strings.Contains(o.StatusReason, tc.wantReason) || !strings.Contains(s.Data.FailureReason, tc.wantReason) {
				t.Errorf("reason: order %q, saga %q; want them to contain %q", o.StatusReason, s.Data.FailureReason, tc.wantReason)
			}
			if c, r := e.totals(); c != tc.charged || r != tc.refunded {
				t.Errorf("ledger %d/%d, want %d/%d", c, r, tc.charged, tc.refunded)
			}
			checkDeadLetter(t, e, sagaID, orderID, tc.wantSaga == saga.StateFailed)
			if tc.wantSaga == saga.StateFailed {
				if e.disp.count(outbox.TypeOrderFailed) != 1 {
					t.Error("no order.failed event")
				}
				// Stock and money stay where the failed compensation left
				// them: a dead letter for an operator, not silent damage.
				return
			}
			if st := e.stockOf("sku-1"); tc.wantOrder == order.StatusCancelled && (st.Available != 10 || st.Reserved != 0) {
				t.Errorf("stock not restored: %+v", st)
			}
			e.checkInvariants()
		})
	}
}

func checkDeadLetter(t *testing.T, e *env, sagaID, orderID string, want bool) {
	t.Helper()
	var d dlq.DeadLetter
	var err error
	_ = e.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		d, err = tx.FindDeadLetter(ctx, dlq.SourceSaga, sagaID)
		return nil
	})
	if !want {
		if !apperr.Is(err, apperr.NotFound) {
			t.Errorf("unexpected dead letter: %+v, %v", d, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("dead letter: %v", err)
	}
	if d.Status != dlq.StatusOpen || d.SagaID != sagaID || d.OrderID != orderID || d.ErrorType != "transient" ||
		d.IdempotencyKey == "" || d.RetryCount < 10 || len(d.History) != 1 { // RetryCount: the runs, its 10 attempts and the holds of its last
		t.Errorf("dead letter: %+v", d)
	}
	cmd, err := saga.DecodeCommand(d.Payload)
	if err != nil || cmd.SagaID != sagaID || cmd.State != saga.StateCompensating {
		t.Errorf("dead letter payload %s: %+v %v", d.Payload, cmd, err)
	}
}
