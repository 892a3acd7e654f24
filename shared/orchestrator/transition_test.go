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
	steps := saga.CreateOrderSteps
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
			d := decide(cur, steps, stepRun{name: saga.StepProcessPayment, dir: saga.Forward, err: tc.err}, now, resilience.Backoff{})
			if d.next.State != saga.StateCompensating || d.next.Step != tc.wantStep || d.outcome != saga.OutcomeFailed {
				t.Fatalf("next %+v outcome %s, want compensating at step %d", d.next, d.outcome, tc.wantStep)
			}
			if d.cmd == nil || d.cmd.State != saga.StateCompensating || d.cmd.Step != tc.wantStep {
				t.Errorf("next command %+v", d.cmd)
			}
		})
	}
}
