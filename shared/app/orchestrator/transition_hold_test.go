package orchestrator

import (
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
)

// TestLastAttemptIsHeldForTheOutageBound: a participant call's transient
// failure that would spend the step's last attempt (forward or
// compensation), however many were spent before, waits instead — spaced at
// least by the backoff's cap, in whole seconds, moving the token and
// counted in Data.Waits — until the outage bound from the first wait has
// passed; then the next failure ends the step. A permanent failure, or a
// failure of a step that ran in the save transaction, ends it at once.
func TestLastAttemptIsHeldForTheOutageBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := CreateOrderSaga.Table()
	pol := retryPolicy{backoff: resilience.Backoff{Base: 500 * time.Millisecond, Cap: time.Minute, Rand: resilience.NewRand(3)}, outage: 20 * time.Minute}
	boom := apperr.New(apperr.Transient, "provider unavailable")
	for _, dir := range []saga.Direction{saga.Forward, saga.Compensate} {
		st, budget, ended := saga.StateRunning, steps[2].MaxAttempts, saga.OutcomeFailed
		if dir == saga.Compensate {
			st, budget, ended = saga.StateCompensating, steps[2].MaxCompensationAttempts, saga.OutcomeGaveUp
		}
		t.Run(string(dir), func(t *testing.T) {
			cur := saga.Instance{ID: "s", State: st, Step: 2, Attempts: budget - 1, Version: 1}
			run := stepRun{name: "payment", dir: dir, err: boom, call: true}
			now, holds := t0, 0
			for {
				d := decide(cur, steps, run, now, pol)
				if d.outcome == ended {
					if now.Sub(t0) < pol.outage {
						t.Fatalf("step ended %s after its first hold, before the %s bound", now.Sub(t0), pol.outage)
					}
					break
				}
				if d.outcome != saga.OutcomeWaiting {
					t.Fatalf("outcome %s at the last attempt, want waiting or %s", d.outcome, ended)
				}
				if now.Sub(t0) >= pol.outage {
					t.Fatalf("still held %s after the first hold, beyond the %s bound", now.Sub(t0), pol.outage)
				}
				wait := d.next.NextAttemptAt.Sub(now)
				if wait < pol.backoff.Cap || wait%time.Second != 0 || wait > pol.backoff.Cap+pol.backoff.Base+time.Second {
					t.Errorf("held for %s, want the cap %s plus at most the first backoff step, in whole seconds", wait, pol.backoff.Cap)
				}
				if d.next.Attempts != cur.Attempts+1 || d.next.Data.Waits != cur.Data.Waits+1 || spent(d.next) != budget-1 ||
					d.next.Data.OutageSince == nil || !d.next.Data.OutageSince.Equal(t0) || d.cmd == nil {
					t.Fatalf("a hold must move the token and spend nothing: %+v", d.next)
				}
				holds++
				now, cur = d.next.NextAttemptAt.Add(10*time.Second), d.next // each run takes up to its timeout
			}
			if maxHolds := int(pol.outage / pol.backoff.Cap); holds < 2 || holds > maxHolds {
				t.Errorf("%d holds, want between 2 and %d", holds, maxHolds)
			}
		})
	}
	t.Run("not held", func(t *testing.T) {
		last := saga.Instance{ID: "s", State: saga.StateRunning, Step: 2, Attempts: steps[2].MaxAttempts - 1, Version: 1}
		for _, tc := range []struct {
			name string
			run  stepRun
		}{
			{"permanent", stepRun{name: "payment", dir: saga.Forward, err: apperr.New(apperr.Invalid, "bad request"), call: true}},
			{"in the save transaction", stepRun{name: "payment", dir: saga.Forward, err: boom}},
		} {
			if d := decide(last, steps, tc.run, t0, pol); d.outcome != saga.OutcomeFailed {
				t.Errorf("%s: outcome %s, want failed", tc.name, d.outcome)
			}
		}
		early := last
		early.Attempts = 1
		if d := decide(early, steps, stepRun{name: "payment", dir: saga.Forward, err: boom, call: true}, t0, pol); d.outcome != saga.OutcomeRetry || d.next.Data.Waits != 0 {
			t.Errorf("a failure that leaves attempts: outcome %s waits %d, want a retry that spends one", d.outcome, d.next.Data.Waits)
		}
	})
}
