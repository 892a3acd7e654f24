package orchestrator

import (
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
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

// TestOutageWaitsWithoutSpendingAttemptsUpToTheBound: a call refused by an
// open breaker, or failed with the breaker open after it (its failure
// opened the breaker, or it was a failed probe), moves the token, waits at
// least the breaker's RetryIn and spends no attempt — for the outage bound
// from the step's first wait, however many waits that is (a half-open
// breaker refuses with RetryIn 0, so waits can be short). After the bound
// such failures count as attempts, so a dependency that never comes back
// still ends the step.
func TestOutageWaitsWithoutSpendingAttemptsUpToTheBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	pol := retryPolicy{backoff: resilience.Backoff{Base: 500 * time.Millisecond, Cap: time.Minute}, outage: 5 * time.Minute}
	boom := apperr.New(apperr.Transient, "provider unavailable")
	failures := []struct {
		name    string
		err     error
		retryIn time.Duration
	}{
		{"refused while open", &resilience.OpenError{Name: "payment", RetryIn: 9300 * time.Millisecond}, 9300 * time.Millisecond},
		{"refused while a probe is in flight", &resilience.OpenError{Name: "payment"}, 0},
		{"failed and the breaker is open", &resilience.DownError{Err: boom, Name: "payment", RetryIn: 10 * time.Second}, 10 * time.Second},
	}
	for _, f := range failures {
		for _, dir := range []saga.Direction{saga.Forward, saga.Compensate} {
			t.Run(f.name+"/"+string(dir), func(t *testing.T) {
				st, budget := saga.StateRunning, steps[2].MaxAttempts
				if dir == saga.Compensate {
					st, budget = saga.StateCompensating, steps[2].MaxCompensationAttempts
				}
				// Two attempts already spent before the outage.
				cur := saga.Instance{ID: "s", State: st, Step: 2, Attempts: 2, Version: 1}
				run := stepRun{name: "payment", dir: dir, err: f.err}
				now, spentAfter := t0, 0
				for i := 0; ; i++ {
					if i > 10000 {
						t.Fatal("the outage never ends the step")
					}
					d := decide(cur, steps, run, now, pol)
					if d.outcome != saga.OutcomeWaiting && d.outcome != saga.OutcomeRetry {
						if now.Sub(t0) < pol.outage {
							t.Fatalf("step ended %s into the outage, before the %s bound", now.Sub(t0), pol.outage)
						}
						if want := budget - 2; spentAfter+1 != want {
							t.Errorf("after the bound %d failures ended the step, want the %d attempts left", spentAfter+1, want)
						}
						break
					}
					if d.next.Attempts != cur.Attempts+1 || d.cmd == nil || d.cmd.Attempt != d.next.Attempts {
						t.Fatalf("a wait must move the token: %+v", d.next)
					}
					wait := d.next.NextAttemptAt.Sub(now)
					switch {
					case d.outcome == saga.OutcomeWaiting:
						if now.Sub(t0) >= pol.outage {
							t.Fatalf("still waiting %s into the outage, beyond the %s bound", now.Sub(t0), pol.outage)
						}
						if wait < f.retryIn || wait < time.Second || wait%time.Second != 0 {
							t.Errorf("waits %s, want at least RetryIn %s, in whole seconds, at least one", wait, f.retryIn)
						}
						if d.next.Data.OutageSince == nil || !d.next.Data.OutageSince.Equal(t0) {
							t.Errorf("OutageSince %v, want the first wait %v", d.next.Data.OutageSince, t0)
						}
					default:
						spentAfter++
						if wait <= 0 {
							t.Errorf("a retry is due at once")
						}
					}
					now, cur = d.next.NextAttemptAt, d.next
				}
			})
		}
	}
}

// TestTransientRetryHonoursRetryAfterAndIsNeverImmediate: a transient
// failure (a 409: the provider still processing the key) is retried after
// the backoff or the provider's Retry-After, whichever is longer, and never
// at once, even when the jittered backoff samples zero.
func TestTransientRetryHonoursRetryAfterAndIsNeverImmediate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	zero := resilience.Backoff{Base: 500 * time.Millisecond, Cap: time.Minute, Rand: func() float64 { return 0 }}
	conflict := apperr.Wrap(apperr.Transient, apperr.Wrap(apperr.Conflict,
		&resilience.HTTPStatusError{Op: "payment.charge", StatusCode: 409, RetryAfterHint: 3 * time.Second}, "still processing"), "outcome unknown")
	plain := apperr.Wrap(apperr.Transient, apperr.New(apperr.Conflict, "still processing"), "outcome unknown")
	for _, tc := range []struct {
		name string
		err  error
		min  time.Duration
	}{{"409 with Retry-After", conflict, 3 * time.Second}, {"409 without", plain, time.Nanosecond}} {
		for _, st := range []saga.State{saga.StateRunning, saga.StateCompensating} {
			cur := saga.Instance{ID: "s", State: st, Step: 2, Version: 1}
			dir := saga.PhaseOf(st)
			d := decide(cur, steps, stepRun{name: "payment", dir: dir, err: tc.err}, now, retryPolicy{backoff: zero, outage: time.Minute})
			if d.outcome != saga.OutcomeRetry {
				t.Fatalf("%s %s: outcome %s, want retry", tc.name, st, d.outcome)
			}
			if wait := d.next.NextAttemptAt.Sub(now); wait < tc.min {
				t.Errorf("%s %s: retried after %s, want at least %s", tc.name, st, wait, tc.min)
			}
		}
	}
}

// TestGivenUpCompensationStillCompensatesTheStepsBefore: a compensation
// that gives up does not keep the effects of earlier steps: their
// compensations run, except the first step's (it would cancel the order),
// and the saga then fails at the step that gave up, where a redrive
// resumes. A give-up of an earlier epoch (before a redrive) is forgotten.
func TestGivenUpCompensationStillCompensatesTheStepsBefore(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	pol := retryPolicy{backoff: resilience.Backoff{Base: time.Second, Cap: time.Minute}, outage: time.Minute}
	refused := apperr.New(apperr.Invalid, "refund refused")
	cur := saga.Instance{ID: "s", State: saga.StateCompensating, Step: 2, Attempts: 3, Version: 1, Data: saga.Data{Epoch: 1}}
	d := decide(cur, steps, stepRun{name: saga.StepRefundPayment, dir: saga.Compensate, err: refused}, now, pol)
	if d.outcome != saga.OutcomeGaveUp || d.gaveUp || d.next.State != saga.StateCompensating || d.next.Step != 1 || d.cmd == nil {
		t.Fatalf("after the refund gave up: outcome %s gaveUp %v, next %s step %d: want release_inventory next", d.outcome, d.gaveUp, d.next.State, d.next.Step)
	}
	g := d.next.Data.GaveUp
	if g == nil || g.Step != 2 || g.Attempts != 4 || g.Kind != apperr.Invalid.String() || g.Epoch != 1 {
		t.Fatalf("GaveUp %+v, want step 2, 4 attempts, kind invalid, epoch 1", g)
	}
	d = decide(d.next, steps, stepRun{name: saga.StepReleaseInventory, dir: saga.Compensate}, now, pol)
	if !d.gaveUp || d.next.State != saga.StateFailed || d.next.Step != 2 || d.next.Attempts != 4 || d.cmd != nil || d.kind != apperr.Invalid.String() {
		t.Fatalf("after release: gaveUp %v kind %q, next %s step %d attempts %d: want failed at step 2 without cancelling the order",
			d.gaveUp, d.kind, d.next.State, d.next.Step, d.next.Attempts)
	}
	if d.next.LastError != "refund refused" {
		t.Errorf("LastError %q, want the refund's", d.next.LastError)
	}

	// A redrive bumps the epoch: the old give-up no longer fails the saga.
	redriven := d.next
	redriven.State, redriven.Step, redriven.Attempts, redriven.Data.Epoch = saga.StateCompensating, 1, 0, 2
	d = decide(redriven, steps, stepRun{name: saga.StepReleaseInventory, dir: saga.Compensate, skipped: true}, now, pol)
	if d.gaveUp || d.next.State != saga.StateCompensating || d.next.Step != 0 {
		t.Fatalf("redriven saga: gaveUp %v, next %s step %d: want cancel_order next", d.gaveUp, d.next.State, d.next.Step)
	}
}

// TestStepRetryPolicyOverridesTheAdvancers: a row's own backoff and outage
// bound space that step's retries and waits; a row without them uses the
// advancer's.
func TestStepRetryPolicyOverridesTheAdvancers(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one := func() float64 { return 0.999999 } // the top of each full-jitter interval
	pol := retryPolicy{backoff: resilience.Backoff{Base: time.Second, Cap: time.Minute, Rand: one}, outage: time.Minute}
	boom := apperr.New(apperr.Transient, "timeout")
	steps := CreateOrderSaga.Table()
	cur := saga.Instance{ID: "s", State: saga.StateRunning, Step: 2, Attempts: 3, Version: 1}
	run := stepRun{name: saga.StepProcessPayment, dir: saga.Forward, err: boom}

	d := decide(cur, steps, run, now, pol)
	if got := d.next.NextAttemptAt.Sub(now); got <= 7*time.Second || got > 8*time.Second {
		t.Fatalf("advancer's backoff: retry in %s, want just under 8s (base 1s, 3 spent)", got)
	}
	own := append(saga.Table{}, steps...)
	own[2].BackoffBase, own[2].BackoffCap, own[2].OutageBound = 10*time.Second, 20*time.Second, time.Hour
	d = decide(cur, own, run, now, pol)
	if got := d.next.NextAttemptAt.Sub(now); got <= 19*time.Second || got > 20*time.Second {
		t.Fatalf("step's backoff: retry in %s, want just under its 20s cap", got)
	}

	// The step's outage bound: 30 minutes into an outage, the advancer's
	// bound (1 minute) is long past, the step's (1 hour) is not.
	since := now.Add(-30 * time.Minute)
	waiting := cur
	waiting.Data.Waits, waiting.Data.OutageSince = 5, &since
	down := stepRun{name: saga.StepProcessPayment, dir: saga.Forward, err: &resilience.OpenError{Name: "payment", RetryIn: time.Second}}
	if d := decide(waiting, steps, down, now, pol); d.outcome == saga.OutcomeWaiting {
		t.Fatalf("past the advancer's outage bound the step still waits")
	}
	if d := decide(waiting, own, down, now, pol); d.outcome != saga.OutcomeWaiting {
		t.Fatalf("within the step's own outage bound: outcome %s, want waiting", d.outcome)
	}
}
