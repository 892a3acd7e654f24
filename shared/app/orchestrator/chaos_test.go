package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

var errCrash = errors.New("injected crash after the step's effect")

// TestCrashBetweenEffectAndSave crashes the advancer after each step's
// effect and before the saga is saved, then redelivers the same message once
// the lease lapsed: the step runs again, and nothing happens twice.
func TestCrashBetweenEffectAndSave(t *testing.T) {
	tests := []struct {
		step      string
		dir       saga.Direction
		fault     func(string, saga.Direction) error // to reach compensations
		wantOrder order.Status
		wantTrail []string
		charged   int64
		refunded  int64
		reserved  int64
	}{
		{step: saga.StepCreateOrder, dir: saga.Forward, wantOrder: order.StatusConfirmed,
			wantTrail: concat(create, reserve, pay, confirm), charged: 300, reserved: 3},
		{step: saga.StepReserveInventory, dir: saga.Forward, wantOrder: order.StatusConfirmed,
			wantTrail: concat(create, reserve, pay, confirm), charged: 300, reserved: 3},
		{step: saga.StepProcessPayment, dir: saga.Forward, wantOrder: order.StatusConfirmed,
			wantTrail: concat(create, reserve, pay, confirm), charged: 300, reserved: 3},
		{step: saga.StepConfirmOrder, dir: saga.Forward, wantOrder: order.StatusConfirmed,
			wantTrail: concat(create, reserve, pay, confirm), charged: 300, reserved: 3},
		{step: saga.StepRefundPayment, dir: saga.Compensate, fault: faultAt(saga.StepConfirmOrder, saga.Forward, errRejected, -1),
			wantOrder: order.StatusCancelled, charged: 300, refunded: 300,
			wantTrail: concat(create, reserve, pay, []string{"confirm_order/forward/failed"}, refund, release, cancel)},
		{step: saga.StepReleaseInventory, dir: saga.Compensate, fault: faultAt(saga.StepConfirmOrder, saga.Forward, errRejected, -1),
			wantOrder: order.StatusCancelled, charged: 300, refunded: 300,
			wantTrail: concat(create, reserve, pay, []string{"confirm_order/forward/failed"}, refund, release, cancel)},
		{step: saga.StepCancelOrder, dir: saga.Compensate, fault: faultAt(saga.StepConfirmOrder, saga.Forward, errRejected, -1),
			wantOrder: order.StatusCancelled, charged: 300, refunded: 300,
			wantTrail: concat(create, reserve, pay, []string{"confirm_order/forward/failed"}, refund, release, cancel)},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s", tc.step, tc.dir), func(t *testing.T) {
			e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
			e.fault = tc.fault
			crashes := 0
			e.afterStep = func(step string, dir saga.Direction) error {
				if step == tc.step && dir == tc.dir && crashes == 0 {
					crashes++
					return errCrash
				}
				return nil
			}
			orderID, sagaID := e.place(item("sku-1", 3, 100))
			e.deliver(chaos{})
			if crashes != 1 {
				t.Fatalf("the crash was not injected")
			}
			if got := e.trail(sagaID); !reflect.DeepEqual(got, tc.wantTrail) {
				t.Errorf("trail:\n got %v\nwant %v", got, tc.wantTrail)
			}
			if o := e.order(orderID); o.Status != tc.wantOrder {
				t.Fatalf("order %s, want %s", o.Status, tc.wantOrder)
			}
			if c, r := e.totals(); c != tc.charged || r != tc.refunded {
				t.Errorf("ledger %d/%d, want %d/%d", c, r, tc.charged, tc.refunded)
			}
			c := e.sim.Counters()
			if c.ChargedMinor != tc.charged || c.RefundedMinor != tc.refunded || c.Charges > 1 || c.Refunds > 1 {
				t.Errorf("provider: %+v", c)
			}
			if st := e.stockOf("sku-1"); st.Reserved != 0 || st.Sold != tc.reserved || st.Available != 10-tc.reserved {
				t.Errorf("stock: %+v, want %d sold (reserved, then settled on confirm)", st, tc.reserved)
			}
			e.checkInvariants()
		})
	}
}

// TestDuplicatesAndReordering delivers every message twice, in random order,
// across many concurrent sagas, and compares with a clean run — with step
// chaining (the default) and with one step per message (so that duplicates
// meet sagas between every pair of steps).
func TestDuplicatesAndReordering(t *testing.T) {
	for _, chainSteps := range []int{0, 1} {
		t.Run(fmt.Sprintf("chain=%d", chainSteps), func(t *testing.T) { testDuplicatesAndReordering(t, chainSteps) })
	}
}

func testDuplicatesAndReordering(t *testing.T, chainSteps int) {
	run := func(c chaos) (*env, []order.Status) {
		e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 6, "sku-2": 100}, seed: 5})
		e.advWith(func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = chainSteps })
		e.fault = faultAt(saga.StepProcessPayment, saga.Forward, errTransient, 3)
		var ids []string
		for i := 0; i < 12; i++ {
			price := int64(100 + i)
			if i%4 == 3 {
				price = 2_000_000 // declined
			}
			id, _ := e.place(item("sku-2", 1, price))
			ids = append(ids, id)
		}
		e.deliver(chaos{}) // sequentially: orders in creation order get sku-2 first
		for i := 0; i < 5; i++ {
			id, _ := e.place(item("sku-1", 2, 50)) // only 3 of 5 fit
			ids = append(ids, id)
		}
		e.deliver(c)
		st := make([]order.Status, len(ids))
		for i, id := range ids {
			st[i] = e.order(id).Status
		}
		return e, st
	}
	clean, want := run(chaos{})
	messy, got := run(chaos{shuffle: true, duplicate: 1})
	if n := countStatus(got, order.StatusConfirmed); n != 3+9 {
		t.Errorf("%d confirmed orders, want 12", n)
	}
	// The first 12 orders do not compete; the last 5 compete for sku-1, so
	// only how many of them won must agree.
	if !reflect.DeepEqual(got[:12], want[:12]) || countStatus(got[12:], order.StatusConfirmed) != countStatus(want[12:], order.StatusConfirmed) {
		t.Errorf("statuses differ:\nclean %v\nmessy %v", want, got)
	}
	cc, cr := clean.totals()
	mc, mr := messy.totals()
	if cc-cr != mc-mr {
		t.Errorf("net money differs: clean %d, messy %d", cc-cr, mc-mr)
	}
	if messy.stats[orchestrator.StatusStale]+messy.stats[orchestrator.StatusFinished] == 0 {
		t.Error("no stale message was seen: duplicates were not delivered")
	}
	if chainSteps < 0 && messy.stats[orchestrator.StatusStale] == 0 {
		t.Error("one step per message: duplicates must meet sagas mid-way (stale)")
	}
	if ms, cs := stepCount(messy), stepCount(clean); ms != cs {
		t.Errorf("ran %d steps with duplicates, %d without: a step ran twice", ms, cs)
	}
	messy.checkInvariants()
	clean.checkInvariants()
}

func countStatus(st []order.Status, want order.Status) int {
	n := 0
	for _, s := range st {
		if s == want {
			n++
		}
	}
	return n
}

// TestRandomizedRun drives many orders through limited stock with random
// declines, provider failures and lost answers, crashes, duplicates,
// reordering and lost messages (recovery resends), then checks the
// invariants.
func TestRandomizedRun(t *testing.T) { randomizedRun(t, true) }

// TestRandomizedRunFoldedSaves is TestRandomizedRun without injected
// crashes: chained steps that touch only the store are saved in the
// transaction of the step before them (Advancer.saveIn) while steps fail,
// are declined, retried and compensated and messages are duplicated,
// reordered and lost.
func TestRandomizedRunFoldedSaves(t *testing.T) { randomizedRun(t, false) }

func randomizedRun(t *testing.T, crashes bool) {
	seeds := []uint64{1, 2}
	if testing.Short() || raceEnabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			stock := map[string]int64{"sku-a": 150, "sku-b": 100, "sku-c": 40, "sku-d": 5}
			e := newEnv(t, envOpts{stock: stock, seed: seed,
				sim: paymentsim.Config{FailureRate: 0.15, LostAnswerRate: 0.1, Seed: seed}})
			skus := []string{"sku-a", "sku-b", "sku-c", "sku-d"}
			if crashes {
				e.afterStep = func(string, saga.Direction) error {
					if e.rnd.Float64() < 0.03 {
						return errCrash
					}
					return nil
				}
			}
			e.fault = func(step string, _ saga.Direction) error {
				switch r := e.rnd.Float64(); {
				case (step == saga.StepConfirmOrder || step == saga.StepCreateOrder) && r < 0.05:
					return errTransient
				case step == saga.StepConfirmOrder && r < 0.10:
					return errRejected
				}
				return nil
			}
			// Some sagas never hear their charge's answer: the provider has
			// the money, the ledger does not, and the refund must find it.
			doomed := map[string]bool{}
			e.payVia.Provider = &lossyCharges{Sim: e.sim, lose: func(key string) bool { return doomed[key] }}
			const n = 220
			for i := 0; i < n; i++ {
				var items []order.Item
				for j := 0; j <= e.rnd.IntN(3); j++ {
					items = append(items, item(skus[e.rnd.IntN(len(skus))], 1+e.rnd.Int64N(3), 1+e.rnd.Int64N(450_000)))
				}
				_, sagaID := e.place(items...)
				doomed[payment.EntryID(sagaID, payment.Charge)] = e.rnd.Float64() < 0.1
				if i%20 == 19 {
					e.deliver(chaos{shuffle: true, duplicate: 0.3, lose: 0.02})
				}
				e.clock.Advance(time.Second)
			}
			e.settle(chaos{shuffle: true, duplicate: 0.3, lose: 0.02})
			e.checkInvariants()
			var byState = map[saga.State]int{}
			for _, id := range e.sagas {
				byState[e.saga(id).State]++
			}
			if byState[saga.StateCompleted] == 0 || byState[saga.StateCompensated] == 0 {
				t.Errorf("the run did not exercise both outcomes: %v", byState)
			}
			if byState[saga.StateFailed] != 0 {
				t.Errorf("sagas failed: %v", byState)
			}
			c := e.sim.Counters()
			if c.Declines == 0 || c.Failures == 0 || c.LostAnswers == 0 || c.Replays == 0 || c.Refunds < 3 {
				t.Errorf("the provider faults were not exercised: %+v", c)
			}
			t.Logf("sagas %v; messages %v; provider %+v", byState, e.stats, c)
			rep, err := e.rec.Run(context.Background())
			if err != nil || rep.Reconciled != 0 || rep.Resent != 0 {
				t.Errorf("recovery after the run: %+v %v", rep, err)
			}
		})
	}
}

// stepCount is the number of step and compensation executions saved.
func stepCount(e *env) int {
	n := 0
	for _, c := range e.steps {
		n += c
	}
	return n
}
