package orchestrator

import (
	"testing"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/resilience"
	"ordersaga/shared/saga"
)

// TestPermanentFailureCompensatesFromTheRightStep: a business refusal
// (Rejected) had no effect, so compensation starts from the previous step;
// any other permanent error may follow an attempt that took effect, so the
// failing step itself is compensated too.
func TestPermanentFailureCompensatesFromTheRightStep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	payment := 2 // process_payment
	cases := []struct {
		name     string
		err      error
		wantStep int
	}{
		{"declined (Rejected)", apperr.New(apperr.Rejected, "declined"), payment - 1},
		{"refused request (Invalid)", apperr.New(apperr.Invalid, "bad request"), payment},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := saga.Instance{ID: "s", State: saga.StateRunning, Step: payment, Version: 3}
			d := decide(cur, steps, stepRun{name: saga.StepProcessPayment, dir: saga.Forward, err: tc.err}, now, retryPolicy{backoff: resilience.Backoff{}})
			if d.next.State != saga.StateCompensating || d.next.Step != tc.wantStep || d.outcome != saga.OutcomeFailed {
				t.Fatalf("next %+v outcome %s, want compensating at step %d", d.next, d.outcome, tc.wantStep)
			}
			if d.cmd == nil || d.cmd.State != saga.StateCompensating || d.cmd.Step != tc.wantStep {
				t.Errorf("next command %+v", d.cmd)
			}
		})
	}
}

// TestBreakerRefusalsWaitWithoutSpendingAttempts: a refusal by an open
// breaker moves the token, waits at least the breaker's RetryIn and spends
// no attempt — up to the wait bound, after which refusals count again, so
// a dependency that never comes back still ends the step.
func TestBreakerRefusalsWaitWithoutSpendingAttempts(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	pol := retryPolicy{backoff: resilience.Backoff{Base: 500 * time.Millisecond, Cap: time.Minute}, waits: 3}
	open := &resilience.OpenError{Name: "payment", RetryIn: 9300 * time.Millisecond}
	for _, dir := range []saga.Direction{saga.Forward, saga.Compensate} {
		st, budget := saga.StateRunning, steps[2].MaxAttempts
		if dir == saga.Compensate {
			st, budget = saga.StateCompensating, steps[2].MaxCompensationAttempts
		}
		cur := saga.Instance{ID: "s", State: st, Step: 2, Version: 1}
		run := stepRun{name: "payment", dir: dir, err: open}
		for i := 0; ; i++ {
			if i > 100 {
				t.Fatalf("%s: refusals never end the step", dir)
			}
			d := decide(cur, steps, run, now, pol)
			if d.outcome != saga.OutcomeRetry {
				if i != pol.waits+budget-1 {
					t.Errorf("%s: step ended after %d refusals, want %d waits + %d attempts", dir, i+1, pol.waits, budget)
				}
				break
			}
			if d.next.Attempts != cur.Attempts+1 || d.cmd == nil || d.cmd.Attempt != d.next.Attempts {
				t.Fatalf("%s: a refusal must move the token: %+v", dir, d.next)
			}
			if i < pol.waits {
				if wait := d.next.NextAttemptAt.Sub(now); wait < open.RetryIn || wait%time.Second != 0 {
					t.Errorf("%s: waits %s, want at least RetryIn %s in whole seconds", dir, wait, open.RetryIn)
				}
			}
			cur = d.next
		}
	}
}
