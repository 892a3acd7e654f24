package orchestrator

import (
	"fmt"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/resilience"
	"ordersaga/shared/saga"
	"ordersaga/shared/textcut"
)

// stepRun is the outcome of running one step or compensation.
type stepRun struct {
	name     string
	dir      saga.Direction
	err      error
	skipped  bool // a compensation that had nothing to undo
	pending  bool // an internal step, run inside the save transaction
	duration time.Duration
}

// decision is what a step outcome does to the saga.
type decision struct {
	next    saga.Instance
	outcome saga.Outcome
	// cmd is the next saga.advance to write; nil when the saga finished.
	cmd *Command
	// gaveUp: a compensation failed for good; the saga failed.
	gaveUp bool
}

// permanent reports whether a step error is final for this input: a business
// refusal or a malformed request. Anything else (timeouts, unavailability,
// unexpected errors) may succeed later, so it is retried.
func permanent(err error) bool {
	return apperr.Is(err, apperr.Rejected) || apperr.Is(err, apperr.Invalid)
}

// decide applies one step outcome to cur (a pure function of its inputs):
//
//   - forward ok → next step (attempts 0), or completed after the last;
//   - forward transient → retry after a full-jitter backoff, unless the
//     step's attempts are spent: then compensation starts from this step
//     itself (its outcome is unknown; compensations are idempotent);
//   - forward permanent → compensation starts from the previous step (only
//     completed steps are compensated; create_order counts as completed
//     from the start, since the API wrote the order with the saga);
//   - compensation ok → the previous compensation, or compensated after step 0;
//   - compensation transient → retry with backoff until its attempts are
//     spent; compensation permanent or spent → failed (dead letter).
//
// The lease is cleared and the version bumped; every outcome changes the
// token (phase, step, attempts), so no message can be acted on twice.
func decide(cur saga.Instance, steps []saga.StepDef, r stepRun, now time.Time, backoff resilience.Backoff) decision {
	next := cur
	next.LeaseOwner, next.LeaseUntil = "", time.Time{}
	next.UpdatedAt, next.NextAttemptAt, next.Version = now, now, cur.Version+1
	next.Data.Redrives = 0 // the saga moved: recovery's count starts again
	if r.err != nil {
		next.LastError = textcut.Cut(r.err.Error(), maxErrorText)
	}
	def := steps[cur.Step]
	d := decision{}
	if r.dir == saga.Forward {
		switch {
		case r.err == nil:
			d.outcome = saga.OutcomeSucceeded
			next.Attempts = 0
			next.Step = cur.Step + 1
			if next.Step >= len(steps) {
				next.State, next.Step, next.FinishedAt = saga.StateCompleted, len(steps), now
			} else {
				next.State = saga.StateRunning
			}
		case permanent(r.err):
			d.outcome = saga.OutcomeFailed
			next.Data.FailureReason = fmt.Sprintf("%s: %s", r.name, apperr.Message(r.err))
			// A business refusal (Rejected: out of stock, declined) is known
			// to have had no effect: compensation starts from the previous
			// step. Any other permanent error (Invalid: the participant
			// refused the request itself) may follow an attempt whose effect
			// happened, so this step is compensated too (compensations are
			// idempotent no-ops when nothing happened). create_order's effect,
			// the order row, was written with the saga by the API: it is
			// always compensated (cancel_order skips an order that is missing
			// or already final).
			from := cur.Step
			if apperr.Is(r.err, apperr.Rejected) {
				from = max(cur.Step-1, 0)
			}
			compensateFrom(&next, from, now)
		case cur.Attempts+1 >= def.MaxAttempts:
			d.outcome = saga.OutcomeFailed
			next.Data.FailureReason = fmt.Sprintf("%s: gave up after %d attempts", r.name, cur.Attempts+1)
			compensateFrom(&next, cur.Step, now)
		default:
			d.outcome = saga.OutcomeRetry
			next.State, next.Attempts = saga.StateRunning, cur.Attempts+1
			next.NextAttemptAt = now.Add(backoff.Delay(cur.Attempts))
		}
	} else {
		switch {
		case r.err == nil:
			d.outcome = saga.OutcomeSucceeded
			if r.skipped {
				d.outcome = saga.OutcomeSkipped
			}
			compensateFrom(&next, cur.Step-1, now)
		case !permanent(r.err) && cur.Attempts+1 < def.MaxCompensationAttempts:
			d.outcome = saga.OutcomeRetry
			next.Attempts = cur.Attempts + 1
			next.NextAttemptAt = now.Add(backoff.Delay(cur.Attempts))
		default:
			d.outcome, d.gaveUp = saga.OutcomeGaveUp, true
			next.State, next.Attempts, next.FinishedAt = saga.StateFailed, cur.Attempts+1, now
		}
	}
	if !next.State.Finished() {
		reason := ReasonNext
		switch {
		case d.outcome == saga.OutcomeRetry:
			reason = ReasonRetry
		case next.State == saga.StateCompensating:
			reason = ReasonCompensate
		}
		c := commandFor(next, reason)
		d.cmd = &c
	}
	d.next = next
	return d
}

// compensateFrom moves s to compensate step j next, or to compensated when
// there is no step left to compensate (j < 0).
func compensateFrom(s *saga.Instance, j int, now time.Time) {
	s.Attempts = 0
	if j < 0 {
		s.State, s.Step, s.FinishedAt = saga.StateCompensated, 0, now
		return
	}
	s.State, s.Step = saga.StateCompensating, j
}

// stepName is the name of what inst runs next: the forward step while
// pending or running, the compensation while compensating.
func stepName(steps []saga.StepDef, inst saga.Instance) (string, saga.Direction) {
	if inst.Step < 0 || inst.Step >= len(steps) {
		return "", ""
	}
	if inst.State == saga.StateCompensating {
		return steps[inst.Step].Compensation, saga.Compensate
	}
	return steps[inst.Step].Name, saga.Forward
}

// maxErrorText bounds the error texts stored with a saga, its step log and
// its dead letter (cut on a character boundary by textcut.Cut).
const maxErrorText = 1000
