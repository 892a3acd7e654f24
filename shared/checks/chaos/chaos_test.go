package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/wiring/app"
)

func run(t *testing.T, o Options) Report {
	t.Helper()
	o.Dir = t.TempDir()
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

// wantViolation fails t unless rep reports a violation mentioning want.
func wantViolation(t *testing.T, rep Report, want string) {
	t.Helper()
	if rep.OK() {
		t.Fatal("the run reported no violation")
	}
	for _, v := range rep.Violations {
		if strings.Contains(v, want) {
			t.Logf("%d violations, first: %s", len(rep.Violations), rep.Violations[0])
			return
		}
	}
	t.Errorf("no violation mentions %q:\n%s", want, strings.Join(rep.Violations, "\n"))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestRunHoldsGuarantees runs the suite under the default faults and
// expects every guarantee to hold — and the faults to have happened.
func TestRunHoldsGuarantees(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rep := run(t, Options{Orders: 40, Seed: seed})
			if !rep.OK() {
				var b bytes.Buffer
				rep.WriteTable(&b)
				t.Fatalf("violations:\n%s", b.String())
			}
			if got := rep.Confirmed + rep.Cancelled + rep.Failed; got != 40 || rep.Orders != 40 {
				t.Errorf("%d orders ended (%d placed), want 40", got, rep.Orders)
			}
			if rep.Confirmed == 0 || rep.Cancelled == 0 {
				t.Errorf("confirmed %d, cancelled %d: both outcomes should occur", rep.Confirmed, rep.Cancelled)
			}
			if sum(rep.Crashes) == 0 || sum(rep.Faults) == 0 || rep.DuplicatesDelivered == 0 || rep.Retries == 0 {
				t.Errorf("faults were not exercised: crashes %v, faults %v, duplicates %d, retries %d",
					rep.Crashes, rep.Faults, rep.DuplicatesDelivered, rep.Retries)
			}
			if rep.Requests <= rep.Orders {
				t.Errorf("%d requests for %d orders: no duplicate client requests", rep.Requests, rep.Orders)
			}
			// Crashes are injected into the step table (after a call's
			// effect, inside a store-only step's save), so store-only steps
			// still fold into the save before, as in production.
			if rep.FoldedSteps == 0 || rep.Crashes["step_after_effect"] == 0 || rep.Crashes["advancer_in_save"] == 0 {
				t.Errorf("folded steps %d, crashes after a step %d, in a save %d: all should occur",
					rep.FoldedSteps, rep.Crashes["step_after_effect"], rep.Crashes["advancer_in_save"])
			}
		})
	}
}

// TestRunIsDeterministic: the same seed gives the same report.
func TestRunIsDeterministic(t *testing.T) {
	a := run(t, Options{Orders: 30, Seed: 7})
	b := run(t, Options{Orders: 30, Seed: 7})
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs with seed 7 differ:\n%+v\n%+v", a, b)
	}
}

// TestCheckerCatchesBrokenProduct breaks the product on purpose, in a
// different way per case, and expects the run to report it.
func TestCheckerCatchesBrokenProduct(t *testing.T) {
	tests := []struct {
		name       string
		faults     func(*Faults)
		tamper     func(*app.App)
		advancer   func(*orchestrator.AdvancerConfig)
		afterDrain func(context.Context, *app.App, store.Store) error
		want       string // in some violation
	}{{
		name:     "stock reserved twice",
		advancer: func(c *orchestrator.AdvancerConfig) { c.Inventory = doubleReserve{c.Inventory.(*stock.Service)} },
		want:     "belongs to no saga",
	}, {
		name:     "charged twice",
		advancer: func(c *orchestrator.AdvancerConfig) { c.Payments = doubleCharge{c.Payments.(*payments.Service)} },
		want:     "ledger entry",
	}, {
		name: "idempotency key ignored",
		faults: func(f *Faults) {
			f.DuplicatePost = 1
		},
		tamper: func(a *app.App) {
			var n atomic.Int64
			inner := a.HTTP
			a.HTTP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", r.Header.Get("Idempotency-Key"), n.Add(1)))
				inner.ServeHTTP(w, r)
			})
		},
		want: "which no client sent",
	}, {
		name: "outbox row lost",
		afterDrain: func(ctx context.Context, a *app.App, st store.Store) error {
			return st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				n, err := tx.DeletePublishedOutbox(ctx, time.Now().AddDate(10, 0, 0), 1)
				if err == nil && n != 1 {
					err = fmt.Errorf("deleted %d rows", n)
				}
				return err
			})
		},
		want: "no transaction committed that event",
	}, {
		name: "order status diverges from its saga",
		afterDrain: func(ctx context.Context, a *app.App, st store.Store) error {
			return st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				l, err := tx.ListSagasByState(ctx, saga.StateCompensated, time.Time{}, 1)
				if err != nil || len(l) == 0 {
					return fmt.Errorf("no compensated saga: %v", err)
				}
				o, err := tx.GetOrder(ctx, l[0].Data.OrderID)
				if err != nil {
					return err
				}
				prev := o.Version
				o.Status, o.Version = order.StatusConfirmed, prev+1
				return tx.UpdateOrder(ctx, o, prev)
			})
		},
		want: "but order",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := DefaultFaults()
			if tc.faults != nil {
				tc.faults(&f)
			}
			rep := run(t, Options{Orders: 20, Seed: 3, Faults: &f, Tamper: tc.tamper, TamperAdvancer: tc.advancer, AfterDrain: tc.afterDrain})
			wantViolation(t, rep, tc.want)
			var b bytes.Buffer
			rep.WriteTable(&b)
			if !strings.Contains(b.String(), "violations:\n  - ") {
				t.Errorf("the table does not list the violations:\n%s", b.String())
			}
		})
	}
}

// doubleReserve reserves every saga's stock a second time under another key.
type doubleReserve struct{ *stock.Service }

func (d doubleReserve) ReserveIn(ctx context.Context, tx store.Tx, sagaID, orderID string, lines []inventory.Line, now time.Time) (inventory.Reservation, error, error) {
	r, outcome, err := d.Service.ReserveIn(ctx, tx, sagaID, orderID, lines, now)
	if outcome != nil || err != nil {
		return r, outcome, err
	}
	_, _, err = d.Service.ReserveIn(ctx, tx, sagaID+"-again", orderID, lines, now)
	return r, nil, err
}

// doubleCharge charges every saga a second time under another key.
type doubleCharge struct{ *payments.Service }

func (d doubleCharge) Charge(ctx context.Context, sagaID, orderID string, amount int64, currency string) error {
	if err := d.Service.Charge(ctx, sagaID, orderID, amount, currency); err != nil {
		return err
	}
	_ = d.Service.Charge(ctx, sagaID+"-again", orderID, amount, currency)
	return nil
}

func TestClockAdvancesBetweenReadings(t *testing.T) {
	c := newClock(time.Millisecond)
	a, b := c.Now(), c.Now()
	if got := b.Sub(a); got != time.Millisecond {
		t.Errorf("two readings of an advancing clock are %s apart, want 1ms", got)
	}
	c.Advance(time.Second)
	if got := c.Now().Sub(b); got != time.Second+time.Millisecond {
		t.Errorf("after Advance(1s) the next reading is %s after the last, want 1.001s", got)
	}
	still := newClock(0)
	if a, b := still.Now(), still.Now(); !a.Equal(b) {
		t.Errorf("a clock without a step moved between readings: %s, %s", a, b)
	}
}

// TestRealClockOutagesKeepTheGuarantees runs the real-clock mode with no
// random faults, only its two long outages on a clock that moves between
// readings: the outages must have happened (minutes of fake time, sends to
// order-events refused, orders placed while the provider was down), and
// every guarantee must hold through them — no order cancelled by the
// payment outage, every event published after the operator's redrive.
func TestRealClockOutagesKeepTheGuarantees(t *testing.T) {
	rep := run(t, Options{Orders: 60, Seed: 3, Faults: &Faults{}, Advancing: time.Millisecond, Outages: true})
	if min := paymentOutageMin + eventsOutageMin; rep.Simulated < min {
		t.Errorf("the run covered %s of fake time, less than its two outages (%s)", rep.Simulated, min)
	}
	if rep.Faults["events_outage_refused"] == 0 {
		t.Errorf("no send to order-events was refused during its outage: faults %v", rep.Faults)
	}
	if !strings.Contains(strings.Join(rep.Settings, "; "), "payment outage") {
		t.Errorf("the report does not name the payment outage: %v", rep.Settings)
	}
	if !rep.OK() {
		var b bytes.Buffer
		rep.WriteTable(&b)
		t.Errorf("violations:\n%s", b.String())
	}
}

func TestOutagesNeedASequentialRun(t *testing.T) {
	for _, o := range []Options{{Orders: 60, Outages: true, Concurrent: true}, {Orders: 10, Outages: true}, {Orders: 10, Advancing: -time.Second}} {
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("Run(%+v) accepted the options", o)
		}
	}
}
