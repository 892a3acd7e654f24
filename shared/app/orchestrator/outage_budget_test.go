package orchestrator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
)

// An outage that meets a step whose attempts were partly spent before it:
// the failures the breaker no longer counts (another order's successful
// charge reset its count of consecutive failures) leave the step fewer
// attempts than the breaker's threshold, so the outage alone would spend
// them all through a closed breaker. The step must still wait for the
// provider, up to the outage bound, and the order survive the outage.

// scriptedProvider fails the calls of one saga as fail says, and every call
// while the provider is down (from downFrom, for downFor); the rest reach
// the simulator.
type scriptedProvider struct {
	payments.Provider
	w *timedWorld
	s *script
}

// script is what scriptedProvider does; the test changes it between runs.
type script struct {
	saga     string
	fail     func(op string) error // how a call of op for saga fails; nil error: it passes
	calls    map[string]int        // op → calls of saga
	downFrom time.Time             // zero: not down yet
	downFor  time.Duration
}

func (s *script) down(now time.Time) bool {
	return !s.downFrom.IsZero() && !now.Before(s.downFrom) && now.Before(s.downFrom.Add(s.downFor))
}

func (p scriptedProvider) answer(op, key string) error {
	p.w.call(op)
	if strings.HasPrefix(key, p.s.saga+":") {
		p.s.calls[op]++
		if p.s.fail != nil {
			if err := p.s.fail(op); err != nil {
				return err
			}
		}
	}
	if p.s.down(p.w.e.clock.Peek()) {
		return apperr.New(apperr.Transient, "provider unavailable")
	}
	return nil
}

func (p scriptedProvider) Charge(ctx context.Context, key string, amount int64, cur string) (string, error) {
	if err := p.answer("charge", key); err != nil {
		return "", err
	}
	return p.Provider.Charge(ctx, key, amount, cur)
}

func (p scriptedProvider) Refund(ctx context.Context, key, chargeKey string, amount int64, cur string) (bool, error) {
	if err := p.answer("refund", key); err != nil {
		return false, err
	}
	return p.Provider.Refund(ctx, key, chargeKey, amount, cur)
}

// resetBreaker is another order's successful call through the payment
// breaker: it sets the breaker's count of consecutive failures back to 0.
func (w *timedWorld) resetBreaker() {
	w.t.Helper()
	if err := w.policy.Call(context.Background(), "charge", func(context.Context) error { return nil }); err != nil {
		w.t.Fatal(err)
	}
}

// TestOutageAfterSpentAttemptsCancelsNothing: a lone order whose
// process_payment spent one (then two) attempts on a transient failure
// that the breaker then forgot (another order's successful charge reset
// it), then the provider goes down for 3 minutes, well within the outage
// bound: the order is CONFIRMED after the provider is back, the breaker
// opened during the outage, and the payment step never gave up. Both
// publish paths.
func TestOutageAfterSpentAttemptsCancelsNothing(t *testing.T) {
	const outage = 3 * time.Minute
	for _, preSpent := range []int{1, 2} {
		for _, inTx := range []bool{true, false} {
			t.Run(fmt.Sprintf("spent=%d/inTx=%v", preSpent, inTx), func(t *testing.T) {
				s := &script{calls: map[string]int{}, downFor: outage}
				w := newTimedWorld(t, inTx, func(w *timedWorld) payments.Provider {
					return scriptedProvider{Provider: w.e.sim, w: w, s: s}
				})
				start := w.e.clock.Peek()
				oid, sid := w.place("spent-then-down")
				s.saga = sid
				// The first preSpent attempts of the charge fail (a transient
				// failure of this order alone); the breaker then forgets them.
				s.fail = func(op string) error {
					if op == "charge" {
						return apperr.New(apperr.Transient, "provider hiccup")
					}
					return nil
				}
				w.runUntil(start.Add(time.Minute), func() bool {
					cur := w.e.saga(sid)
					return cur.Step == 2 && cur.Attempts >= preSpent || cur.State.Finished()
				})
				if cur := w.e.saga(sid); cur.Step != 2 || cur.Attempts != preSpent || cur.Data.Waits != 0 {
					t.Fatalf("saga at step %d attempts %d waits %d (%s), want process_payment with %d attempts spent", cur.Step, cur.Attempts, cur.Data.Waits, cur.State, preSpent)
				}
				s.fail = nil
				w.resetBreaker()
				s.downFrom = w.e.clock.Peek()
				opened := false
				w.runUntil(start.Add(orchestrator.DefaultOutageBound), func() bool {
					opened = opened || w.policy.Breaker.State() == resilience.StateOpen
					return w.e.saga(sid).State.Finished()
				})

				o, inst := w.e.order(oid), w.e.saga(sid)
				for _, l := range w.log(sid) {
					if l.Step == saga.StepProcessPayment && l.Outcome == saga.OutcomeFailed {
						t.Errorf("process_payment gave up %s into a %s outage (bound %s): %s", l.At.Sub(s.downFrom).Round(time.Millisecond), outage, orchestrator.DefaultOutageBound, l.Error)
					}
				}
				if o.Status != order.StatusConfirmed {
					t.Fatalf("order %s (%s) %s after it was placed, want CONFIRMED: the outage (%s) is within the bound", o.Status, o.StatusReason, o.UpdatedAt.Sub(start), outage)
				}
				if end := s.downFrom.Add(outage); o.UpdatedAt.Before(end) {
					t.Errorf("order confirmed at %s, before the provider came back at %s", o.UpdatedAt, end)
				}
				if !opened {
					t.Errorf("the breaker never opened during the outage")
				}
				n, shortest := spacing(w.log(sid), saga.StepProcessPayment)
				t.Logf("process_payment ran %d times, at least %s apart; %d charges of this order; saga %s %s after the order",
					n, shortest, s.calls["charge"], inst.State, inst.FinishedAt.Sub(start))
				if shortest < time.Second {
					t.Errorf("process_payment runs %s apart: attempts spin instead of waiting", shortest)
				}
				if w.early > 0 {
					t.Errorf("%d commands arrived before their saga was due", w.early)
				}
				w.e.checkInvariants()
			})
		}
	}
}

// TestRefundOutageAfterSpentAttemptsGivesNothingUp: an order whose charge
// the provider refused as invalid is compensated; its refund fails six
// times on transient failures of this order alone, each forgotten by the
// breaker, leaving 4 of its 10 attempts (fewer than the breaker's
// threshold); then the provider goes down for 3 minutes. The refund waits
// for it and succeeds after it: the order is CANCELLED, the saga
// compensated, no dead letter, no money kept.
func TestRefundOutageAfterSpentAttemptsGivesNothingUp(t *testing.T) {
	const outage, preSpent = 3 * time.Minute, 6
	for _, inTx := range []bool{true, false} {
		t.Run(fmt.Sprintf("inTx=%v", inTx), func(t *testing.T) {
			s := &script{calls: map[string]int{}, downFor: outage}
			w := newTimedWorld(t, inTx, func(w *timedWorld) payments.Provider {
				return scriptedProvider{Provider: w.e.sim, w: w, s: s}
			})
			start := w.e.clock.Peek()
			oid, sid := w.place("refund-spent-then-down")
			s.saga = sid
			s.fail = func(op string) error {
				if op == "charge" {
					return apperr.New(apperr.Invalid, "provider refused the request")
				}
				return apperr.New(apperr.Transient, "provider hiccup")
			}
			// Each failed refund attempt is forgotten by the breaker before
			// the next.
			seen := 0
			w.runUntil(start.Add(10*time.Minute), func() bool {
				cur := w.e.saga(sid)
				if cur.State == saga.StateCompensating && cur.Step == 2 && cur.Attempts > seen {
					seen = cur.Attempts
					w.resetBreaker()
				}
				return cur.State == saga.StateCompensating && cur.Step == 2 && cur.Attempts >= preSpent || cur.State.Finished()
			})
			if cur := w.e.saga(sid); cur.State != saga.StateCompensating || cur.Step != 2 || cur.Attempts != preSpent || cur.Data.Waits != 0 {
				t.Fatalf("saga %s at step %d attempts %d waits %d, want refund_payment with %d attempts spent", cur.State, cur.Step, cur.Attempts, cur.Data.Waits, preSpent)
			}
			s.fail = nil
			s.downFrom = w.e.clock.Peek()
			w.runUntil(s.downFrom.Add(orchestrator.DefaultOutageBound), func() bool { return w.e.saga(sid).State.Finished() })

			o, inst := w.e.order(oid), w.e.saga(sid)
			for _, l := range w.log(sid) {
				if l.Step == saga.StepRefundPayment && l.Outcome == saga.OutcomeGaveUp {
					t.Errorf("refund_payment gave up %s into a %s outage (bound %s): %s", l.At.Sub(s.downFrom).Round(time.Millisecond), outage, orchestrator.DefaultOutageBound, l.Error)
				}
			}
			t.Logf("order %s, saga %s %s after the order; %d refunds of this order", o.Status, inst.State, inst.FinishedAt.Sub(start), s.calls["refund"])
			if o.Status != order.StatusCancelled || inst.State != saga.StateCompensated {
				t.Fatalf("order %s (%s), saga %s: want CANCELLED and compensated after a %s outage", o.Status, o.StatusReason, inst.State, outage)
			}
			if inst.FinishedAt.Before(s.downFrom.Add(outage)) {
				t.Errorf("saga compensated at %s, before the provider came back at %s", inst.FinishedAt, s.downFrom.Add(outage))
			}
			if w.early > 0 {
				t.Errorf("%d commands arrived before their saga was due", w.early)
			}
			w.e.checkInvariants()
		})
	}
}

// TestProviderFailingOneOrderEndsItWithinTheBound: the provider is up but
// fails every charge of one order (a transient error; other orders'
// successes keep the breaker closed): the payment step spends its
// attempts, holds its last one for the outage bound at one run per backoff
// cap, then gives up; the order is CANCELLED, cleanly, within the bound
// plus the step's backoffs and a few cap periods, after at most
// (attempts + outage bound / cap) runs of the step: each attempt a guarded
// call (up to its own attempts), each run after a wait a single call.
func TestProviderFailingOneOrderEndsItWithinTheBound(t *testing.T) {
	s := &script{calls: map[string]int{}}
	w := newTimedWorld(t, true, func(w *timedWorld) payments.Provider {
		return scriptedProvider{Provider: w.e.sim, w: w, s: s}
	})
	start := w.e.clock.Peek()
	oid, sid := w.place("refused-alone")
	s.saga = sid
	s.fail = func(op string) error {
		if op == "charge" {
			return apperr.New(apperr.Transient, "provider hiccup")
		}
		return nil
	}
	seen := 0
	w.runUntil(start.Add(2*orchestrator.DefaultOutageBound), func() bool {
		if cur := w.e.saga(sid); cur.Attempts > seen {
			seen = cur.Attempts
			w.resetBreaker() // other orders' successful charges
		}
		return w.e.saga(sid).State.Finished()
	})
	o, inst := w.e.order(oid), w.e.saga(sid)
	cfg := def()
	runs, shortest := spacing(w.log(sid), saga.StepProcessPayment)
	maxRuns := orchestrator.CreateOrderSaga[2].MaxAttempts + int(orchestrator.DefaultOutageBound/cfg.Saga.BackoffCap)
	within := orchestrator.DefaultOutageBound + 3*cfg.Saga.BackoffCap
	t.Logf("order %s after %s; process_payment ran %d times (at most %d), %d charges of this order", o.Status, inst.FinishedAt.Sub(start), runs, maxRuns, s.calls["charge"])
	if o.Status != order.StatusCancelled || inst.State != saga.StateCompensated {
		t.Fatalf("order %s (%s), saga %s: want CANCELLED and compensated", o.Status, o.StatusReason, inst.State)
	}
	if took := inst.FinishedAt.Sub(start); took < orchestrator.DefaultOutageBound || took > within {
		t.Errorf("saga ended %s after the order, want between the outage bound %s and %s", took, orchestrator.DefaultOutageBound, within)
	}
	if runs > maxRuns {
		t.Errorf("process_payment ran %d times, more than %d", runs, maxRuns)
	}
	// The runs before the first hold make a guarded call each (up to its
	// attempts); every run after a wait makes one call.
	attempts := orchestrator.CreateOrderSaga[2].MaxAttempts
	if calls, most := s.calls["charge"], attempts*payments.DefaultMaxAttempts+runs-attempts; calls > most {
		t.Errorf("%d charges in %d runs, want at most %d (%d attempts of %d calls, then one call per run)", calls, runs, most, attempts, payments.DefaultMaxAttempts)
	}
	// Runs after the first hold are a cap apart: the provider is not
	// hammered for an order it keeps failing.
	held := 0
	var last time.Time
	for _, l := range w.log(sid) {
		if l.Step != saga.StepProcessPayment {
			continue
		}
		if held > 0 && l.At.Sub(last) < cfg.Saga.BackoffCap {
			t.Errorf("a run %s after a held last attempt, want at least the cap %s", l.At.Sub(last), cfg.Saga.BackoffCap)
		}
		if l.Outcome == saga.OutcomeWaiting {
			held++
		}
		last = l.At
	}
	if held == 0 || shortest <= 0 {
		t.Errorf("the last attempt was never held (%d runs)", runs)
	}
	if ch, rf := w.e.totals(); ch != rf {
		t.Errorf("charged %d, refunded %d", ch, rf)
	}
	w.e.checkInvariants()
}

// heldTrail is trail (step/direction/outcome lines) with each run of
// consecutive waits of one step ("…/waiting") as one "…/held" line: a step
// whose last attempt is held waits a number of times that depends on the
// backoff's jitter.
func heldTrail(trail []string) []string {
	var out []string
	for _, l := range trail {
		if h, ok := strings.CutSuffix(l, "/waiting"); ok {
			if len(out) > 0 && out[len(out)-1] == h+"/held" {
				continue
			}
			l = h + "/held"
		}
		out = append(out, l)
	}
	return out
}
