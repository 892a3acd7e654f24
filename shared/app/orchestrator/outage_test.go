package orchestrator_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/transport/identity"
)

// The outage guarantees on a clock that advances between readings, through
// the real relay, the real fast paths and the embedded queue — once with
// the queue in the store's database (commands sent in the step's
// transaction, as locally) and once in a file of its own (sent after
// commit, as in the cloud) — with the default settings of config.Default().

// timedWorld is a saga world whose time passes as a real one does: every
// clock reading moves it by a millisecond, the payment policy's retry
// sleeps move it, and the trigger loop moves it by a second when the queue
// has nothing visible.
type timedWorld struct {
	t       *testing.T
	e       *env
	q       *sqlitequeue.Queue
	rl      *relay.Relay
	policy  *resilience.Policy
	cmdURL  string
	evURL   string
	early   int // commands delivered before their saga was due
	lastRec time.Time

	mu    sync.Mutex
	calls []providerCall
}

// providerCall is one call that reached the payment provider.
type providerCall struct {
	op string // "charge" or "refund"
	at time.Time
}

func newTimedWorld(t *testing.T, inTx bool, provider func(w *timedWorld) payments.Provider) *timedWorld {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 100}, tick: time.Millisecond})
	w := &timedWorld{t: t, e: e}
	var err error
	if inTx {
		w.q, err = sqlitequeue.New(e.store.DB(), sqlitequeue.Config{Now: e.clock.Now})
	} else {
		w.q, err = sqlitequeue.Open(filepath.Join(t.TempDir(), "queue.db"), sqlitequeue.Config{Now: e.clock.Now})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.q.Close() })
	w.cmdURL = must(w.q.Ensure(ctx, queue.QueueSpec{Name: outbox.DestSagaCommands, VisibilityTimeout: 2 * time.Minute}))(t)
	w.evURL = must(w.q.Ensure(ctx, queue.QueueSpec{Name: outbox.DestOrderEvents, VisibilityTimeout: 2 * time.Minute}))(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	def := config.Default()
	w.rl = must(relay.New(relay.Config{Store: e.store, Queue: w.q, Owner: "relay-1",
		URLs: map[string]string{outbox.DestSagaCommands: w.cmdURL, outbox.DestOrderEvents: w.evURL},
		Now:  e.clock.Now, NewID: e.adv.Config().NewID, Log: log}))(t)
	guarded := must(payments.NewGuarded(payments.GuardedConfig{Provider: provider(w), Policy: payments.PolicyConfig{
		MaxConcurrent: def.Payment.MaxConcurrent, AttemptTimeout: def.Payment.Timeout,
		Breaker: resilience.BreakerConfig{FailureThreshold: def.Payment.BreakerThreshold, OpenTimeout: def.Payment.BreakerOpenFor, Now: e.clock.Now},
		Sleep:   func(_ context.Context, d time.Duration) error { e.clock.Advance(d); return nil },
	}}))(t)
	w.policy = guarded.Policy
	e.payVia.Provider = guarded
	e.advWith(func(c *orchestrator.AdvancerConfig) {
		c.Dispatcher = w.rl
		c.Backoff = resilience.Backoff{Base: def.Saga.BackoffBase, Cap: def.Saga.BackoffCap, Rand: resilience.NewRand(11)}
		c.OutageBound = 0 // the default
	})
	e.recWith(func(c *orchestrator.RecoveryConfig) {
		c.Dispatcher, c.StuckAfter, c.MaxResends = w.rl, def.Recovery.StuckAfter, def.Recovery.MaxResends
	})
	e.orders = must(orders.New(orders.Config{Store: e.store, Dispatcher: w.rl, Now: e.clock.Now, NewID: e.adv.Config().NewID, Log: log}))(t)
	return w
}

// call records a call that reached the provider.
func (w *timedWorld) call(op string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, providerCall{op: op, at: w.e.clock.Peek()})
}

// place creates one order of one unit of sku-1.
func (w *timedWorld) place(key string) (orderID, sagaID string) {
	w.t.Helper()
	resp, err := w.e.orders.Create(context.Background(), orders.CreateCommand{Caller: identity.Identity{Subject: "client-1"}, Key: key,
		Request: order.Request{CustomerID: "cust-1", Currency: "RUB", Items: []order.Item{item("sku-1", 1, 100)}}})
	if err != nil {
		w.t.Fatal(err)
	}
	o := w.e.order(resp.OrderID)
	w.e.sagas = append(w.e.sagas, o.SagaID)
	w.e.orderOf[o.SagaID] = o.ID
	return o.ID, o.SagaID
}

// runUntil is the trigger, the relay timer and the recovery timer: it
// consumes visible saga commands (checking none arrived before its saga was
// due), and when none is visible moves the clock by a second and runs the
// relay (and recovery every 5 s, as the local runner does). It stops when
// done holds or the clock passes until.
func (w *timedWorld) runUntil(until time.Time, done func() bool) {
	w.t.Helper()
	ctx := context.Background()
	for !done() && w.e.clock.Peek().Before(until) {
		msgs, err := w.q.Receive(ctx, w.cmdURL, queue.ReceiveOptions{Max: queue.MaxBatch})
		if err != nil {
			w.t.Fatal(err)
		}
		if len(msgs) == 0 {
			w.e.clock.Advance(time.Second)
			if _, err := w.rl.RunOnce(ctx, &relay.Report{}); err != nil {
				w.t.Fatal(err)
			}
			if now := w.e.clock.Peek(); now.Sub(w.lastRec) >= 5*time.Second {
				w.lastRec = now
				if _, err := w.e.rec.Run(ctx); err != nil {
					w.t.Fatal(err)
				}
			}
			continue
		}
		for _, m := range msgs {
			if cmd, err := saga.DecodeCommand([]byte(m.Body)); err == nil {
				if cur := w.e.saga(cmd.SagaID); cmd.Matches(cur) && cur.NextAttemptAt.After(w.e.clock.Peek()) {
					w.early++
				}
			}
			if _, err := w.e.adv.Handle(ctx, orchestrator.Message{EventID: m.Attributes[outbox.AttrEventID], Body: []byte(m.Body),
				Attributes: m.Attributes, ReceiveCount: m.ReceiveCount}); err != nil {
				continue // redelivered after the visibility timeout
			}
			if err := w.q.Delete(ctx, w.cmdURL, m.ReceiptHandle); err != nil {
				w.t.Fatal(err)
			}
		}
	}
}

// log returns a saga's step log.
func (w *timedWorld) log(sagaID string) []saga.LogEntry {
	var out []saga.LogEntry
	w.e.view(func(ctx context.Context, tx store.Tx) error {
		var err error
		out, err = tx.ListSagaLog(ctx, sagaID)
		return err
	})
	return out
}

// spacing reports how many lines of the log ran step, and the shortest
// time between two consecutive ones.
func spacing(log []saga.LogEntry, step string) (n int, shortest time.Duration) {
	var last time.Time
	for _, l := range log {
		if l.Step != step {
			continue
		}
		if n > 0 && (shortest == 0 || l.At.Sub(last) < shortest) {
			shortest = l.At.Sub(last)
		}
		n++
		last = l.At
	}
	return n, shortest
}

// downProvider fails every charge and refund while down says so.
type downProvider struct {
	payments.Provider
	w    *timedWorld
	down func(now time.Time) bool
}

func (p downProvider) Charge(ctx context.Context, key string, amount int64, cur string) (string, error) {
	p.w.call("charge")
	if p.down(p.w.e.clock.Peek()) {
		return "", apperr.New(apperr.Transient, "provider unavailable")
	}
	return p.Provider.Charge(ctx, key, amount, cur)
}

func (p downProvider) Refund(ctx context.Context, key, chargeKey string, amount int64, cur string) (bool, error) {
	p.w.call("refund")
	if p.down(p.w.e.clock.Peek()) {
		return false, apperr.New(apperr.Transient, "provider unavailable")
	}
	return p.Provider.Refund(ctx, key, chargeKey, amount, cur)
}

// TestOutageWithinTheBoundCancelsNothing: one order, then twenty, the
// provider down from the first charge for a span far longer than the
// payment step's attempts and backoff (5 attempts, about 7.5 s) but within
// the outage bound: every order is CONFIRMED once the provider is back;
// the attempts during the outage are spaced by the breaker's open period,
// never spin, and no command arrives before its saga is due. Both publish
// paths.
func TestOutageWithinTheBoundCancelsNothing(t *testing.T) {
	const outage = 3 * time.Minute
	for _, orders := range []int{1, 20} {
		for _, inTx := range []bool{true, false} {
			t.Run(fmt.Sprintf("orders=%d/inTx=%v", orders, inTx), func(t *testing.T) {
				var end time.Time
				w := newTimedWorld(t, inTx, func(w *timedWorld) payments.Provider {
					return downProvider{Provider: w.e.sim, w: w, down: func(now time.Time) bool { return now.Before(end) }}
				})
				start := w.e.clock.Peek()
				end = start.Add(outage)
				var oids, sids []string
				for i := 0; i < orders; i++ {
					oid, sid := w.place(fmt.Sprintf("outage-%d", i))
					oids, sids = append(oids, oid), append(sids, sid)
				}
				w.runUntil(start.Add(orchestrator.DefaultOutageBound), func() bool { return w.e.unfinished() == 0 })

				attempts, shortest := 0, time.Duration(0)
				for i, sid := range sids {
					n, short := spacing(w.log(sid), saga.StepProcessPayment)
					attempts += n
					if n >= 2 && (shortest == 0 || short < shortest) {
						shortest = short
					}
					if o := w.e.order(oids[i]); o.Status != order.StatusConfirmed {
						t.Errorf("order %s %s (%s), want CONFIRMED: the outage (%s) is within the bound", oids[i], o.Status, o.StatusReason, outage)
					} else if o.UpdatedAt.Before(end) {
						t.Errorf("order %s confirmed at %s, before the provider came back at %s", oids[i], o.UpdatedAt, end)
					}
				}
				last := time.Duration(0)
				for _, oid := range oids {
					last = max(last, w.e.order(oid).UpdatedAt.Sub(start))
				}
				t.Logf("process_payment ran %d times (%.1f per order), consecutive runs of one saga at least %s apart; %d provider calls; last confirmed %s after the first order",
					attempts, float64(attempts)/float64(orders), shortest, len(w.calls), last)
				if w.early > 0 {
					t.Errorf("%d commands arrived before their saga was due", w.early)
				}
				if shortest < time.Second && attempts > orders {
					t.Errorf("process_payment attempts of one saga %s apart: attempts spin instead of waiting", shortest)
				}
				if perOrder := int(outage/def().Payment.BreakerOpenFor) + 10; attempts > orders*perOrder {
					t.Errorf("%d attempts for %d orders in a %s outage: more than about one per open period each (%d)", attempts, orders, outage, perOrder)
				}
				w.e.checkInvariants()
			})
		}
	}
}

// TestOutageBeyondTheBoundCompensatesCleanly: one order, the provider down
// for longer than the outage bound: the payment step gives up only after
// the bound, the saga compensates once the provider answers again (the
// refund voids the unknown charge), the order is CANCELLED, its unit is
// back in stock and no money moved. Both publish paths.
func TestOutageBeyondTheBoundCompensatesCleanly(t *testing.T) {
	for _, inTx := range []bool{true, false} {
		t.Run(fmt.Sprintf("inTx=%v", inTx), func(t *testing.T) {
			var end time.Time
			w := newTimedWorld(t, inTx, func(w *timedWorld) payments.Provider {
				return downProvider{Provider: w.e.sim, w: w, down: func(now time.Time) bool { return now.Before(end) }}
			})
			start := w.e.clock.Peek()
			end = start.Add(orchestrator.DefaultOutageBound + 5*time.Minute)
			oid, sid := w.place("lone-2")
			w.runUntil(end.Add(10*time.Minute), func() bool { return w.e.saga(sid).State.Finished() })

			o, s := w.e.order(oid), w.e.saga(sid)
			var gaveUp time.Time
			for _, l := range w.log(sid) {
				if l.Step == saga.StepProcessPayment && l.Outcome == saga.OutcomeFailed {
					gaveUp = l.At
				}
			}
			t.Logf("payment gave up %s after the order; saga %s %s after it", gaveUp.Sub(start), s.State, s.FinishedAt.Sub(start))
			if o.Status != order.StatusCancelled || s.State != saga.StateCompensated {
				t.Fatalf("order %s (%s), saga %s: want CANCELLED and compensated", o.Status, o.StatusReason, s.State)
			}
			if gaveUp.Sub(start) < orchestrator.DefaultOutageBound {
				t.Errorf("the payment step gave up %s into the outage, before the %s bound", gaveUp.Sub(start), orchestrator.DefaultOutageBound)
			}
			if gaveUp.Sub(start) > orchestrator.DefaultOutageBound+2*time.Minute {
				t.Errorf("the payment step gave up %s into the outage, long after the %s bound", gaveUp.Sub(start), orchestrator.DefaultOutageBound)
			}
			if st := w.e.stockOf("sku-1"); st.Reserved != 0 || st.Available != 100 {
				t.Errorf("stock %+v, want all 100 units available and none reserved", st)
			}
			if ch, rf := w.e.totals(); ch != rf {
				t.Errorf("charged %d, refunded %d", ch, rf)
			}
			if w.early > 0 {
				t.Errorf("%d commands arrived before their saga was due", w.early)
			}
			w.e.checkInvariants()
		})
	}
}

func def() config.Config { return config.Default() }
