package orchestrator

import (
	"errors"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/text"
)

// stepRun is the outcome of running one step or compensation.
type stepRun struct {
	name    string
	dir     saga.Direction
	err     error
	skipped bool // a compensation that had nothing to undo
	// inTx is the InTx action left for the save transaction (nil: the
	// step ran already).
	inTx InTxFunc
	// call: the step called a participant (a Call action), whose failure
	// may mean the participant is down.
	call     bool
	duration time.Duration
}

// decision is what a step outcome does to the saga.
type decision struct {
	next    saga.Instance
	outcome saga.Outcome
	// cmd is the next saga.advance to write; nil when the saga finished.
	cmd *saga.Command
	// gaveUp: a compensation failed for good and the saga failed (now, or
	// after the compensations of the steps before it); kind is the apperr
	// kind of that compensation's error (the dead letter's error_type).
	gaveUp bool
	kind   string
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
//   - a dependency that is down (waiting), or a participant call's
//     transient failure that would spend the step's last attempt → wait,
//     spending nothing, for up to the outage bound from the step's first
//     wait (retryPolicy.mayWait);
//   - forward transient → retry after a full-jitter backoff, unless the
//     step's attempts are spent: then compensation starts from this step
//     itself (its outcome is unknown; compensations are idempotent);
//   - forward permanent → compensation starts from the previous step (only
//     completed steps are compensated; create_order counts as completed
//     from the start, since the API wrote the order with the saga);
//   - compensation ok → the previous compensation, or compensated after step 0;
//   - compensation transient → retry with backoff until its attempts are
//     spent; compensation permanent or spent → it gave up: the
//     compensations of the steps before it still run (they do not depend
//     on it: in CreateOrderSaga a refund that cannot be confirmed must not
//     keep the order's units reserved), except the first step's, which
//     would finish the order as cancelled; then the saga fails at the step
//     that gave up (dead letter, order FAILED), where a redrive resumes.
//
// The lease is cleared and the version bumped; every outcome changes the
// token (phase, step, attempts), so no message can be acted on twice.
func decide(cur saga.Instance, steps saga.Table, r stepRun, now time.Time, pol retryPolicy) decision {
	next := cur
	lastErr := ""
	if r.err != nil {
		lastErr = text.Cut(r.err.Error(), maxErrorText)
	}
	next.Moved(lastErr, now)
	def := steps[cur.Step]
	pol = pol.forStep(def.RetryPolicy)
	d := decision{}
	switch {
	case r.err != nil && waiting(r.err) && pol.mayWait(cur, now):
		// The dependency is down (its breaker refused the call or opened
		// after it; or the bulkhead is full): wait for it instead of
		// spending an attempt, for up to the outage bound, so an outage
		// shorter than the bound never cancels an order, however many
		// orders are in flight.
		d.outcome = saga.OutcomeWaiting
		next.Wait(r.dir, now.Add(pol.waitFor(r.err)), now)
	case r.err != nil && r.call && !permanent(r.err) && lastAttempt(cur, def, r.dir) && pol.mayWait(cur, now):
		// A participant call's transient failure would spend the step's
		// last attempt, yet the participant may be down without its
		// breaker having opened: failures the breaker no longer counts (a
		// success of another saga reset it, or another function
		// instance's breaker saw them) spent the step's earlier attempts,
		// so the outage met fewer attempts than the breaker's threshold.
		// The step waits instead (a hold), each run a single call,
		// spaced by the backoff's cap, for up to the outage bound from its
		// first wait; only then does the last attempt end it. So no
		// outage shorter than the bound ends a step, whatever it spent
		// before, and a participant that fails only this saga still ends
		// it after the bound.
		d.outcome = saga.OutcomeWaiting
		next.Wait(r.dir, now.Add(pol.holdFor(r.err)), now)
	case r.dir == saga.Forward:
		d.outcome = forward(&next, cur, def, len(steps), r, now, pol)
	default:
		d.outcome = compensation(&next, cur, def, r, now, pol)
		if g := next.Data.GaveUp; g != nil && g.Epoch == next.Data.Epoch &&
			(next.State == saga.StateCompensated || next.Step == 0) {
			// Every compensation that could run has run: the saga fails
			// at the compensation that gave up.
			d.gaveUp, d.kind = true, g.Kind
			next.FailAt(g.Step, g.Attempts, g.Error, now)
		}
	}
	if !next.State.Finished() {
		reason := saga.ReasonNext
		switch {
		case d.outcome == saga.OutcomeRetry || d.outcome == saga.OutcomeWaiting:
			reason = saga.ReasonRetry
		case next.State == saga.StateCompensating:
			reason = saga.ReasonCompensate
		}
		c := saga.CommandFor(next, reason)
		d.cmd = &c
	}
	d.next = next
	return d
}

// spent is how many attempts of cur's step counted against its budget: the
// waits for a dependency that is down advance the token but not the
// budget.
func spent(cur saga.Instance) int { return cur.Attempts - cur.Data.Waits }

// lastAttempt reports whether a failure of cur's step (def) in direction
// dir would spend its last attempt.
func lastAttempt(cur saga.Instance, def saga.StepDef, dir saga.Direction) bool {
	budget := def.MaxAttempts
	if dir == saga.Compensate {
		budget = def.MaxCompensationAttempts
	}
	return spent(cur)+1 >= budget
}

// forward applies the outcome r of cur's forward step (def, one of n steps)
// to next and returns it.
func forward(next *saga.Instance, cur saga.Instance, def saga.StepDef, n int, r stepRun, now time.Time, pol retryPolicy) saga.Outcome {
	switch {
	case r.err == nil:
		next.Advance(n, now)
		return saga.OutcomeSucceeded
	case permanent(r.err):
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
		next.CompensateFrom(from, now)
		return saga.OutcomeFailed
	case spent(cur)+1 >= def.MaxAttempts:
		next.Data.FailureReason = fmt.Sprintf("%s: gave up after %d attempts", r.name, spent(cur)+1)
		next.CompensateFrom(cur.Step, now)
		return saga.OutcomeFailed
	default:
		next.Retry(r.dir, now.Add(pol.retryIn(r.err, spent(cur))))
		return saga.OutcomeRetry
	}
}

// compensation applies the outcome r of cur's compensation (def's) to next
// and returns it. A compensation that gives up is recorded in
// next.Data.GaveUp (the first of its epoch) and the compensations before
// it still run.
func compensation(next *saga.Instance, cur saga.Instance, def saga.StepDef, r stepRun, now time.Time, pol retryPolicy) saga.Outcome {
	switch {
	case r.err == nil:
		next.CompensateFrom(cur.Step-1, now)
		if r.skipped {
			return saga.OutcomeSkipped
		}
		return saga.OutcomeSucceeded
	case !permanent(r.err) && spent(cur)+1 < def.MaxCompensationAttempts:
		next.Retry(r.dir, now.Add(pol.retryIn(r.err, spent(cur))))
		return saga.OutcomeRetry
	default:
		if g := cur.Data.GaveUp; g == nil || g.Epoch != cur.Data.Epoch {
			next.Data.GaveUp = &saga.GaveUp{Epoch: cur.Data.Epoch, Step: cur.Step, Attempts: cur.Attempts + 1,
				Kind: apperr.KindOf(r.err).String(), Error: next.LastError}
		}
		next.CompensateFrom(cur.Step-1, now)
		return saga.OutcomeGaveUp
	}
}

// retryPolicy is how decide spaces retries.
type retryPolicy struct {
	backoff resilience.Backoff
	// outage bounds how long one step (or compensation) waits for a
	// dependency that is down without spending attempts
	// (AdvancerConfig.OutageBound).
	outage time.Duration
}

// forStep is p with the step's own backoff and outage bound where its row
// sets them.
func (p retryPolicy) forStep(rp saga.RetryPolicy) retryPolicy {
	if rp.BackoffBase > 0 {
		p.backoff.Base = rp.BackoffBase
	}
	if rp.BackoffCap > 0 {
		p.backoff.Cap = rp.BackoffCap
	}
	if rp.OutageBound > 0 {
		p.outage = rp.OutageBound
	}
	return p
}

// DefaultOutageBound is AdvancerConfig.OutageBound's default
// (SAGA_OUTAGE_BOUND): a step waits for a dependency that is down for 20
// minutes from its first wait before such failures start to spend its
// attempts, or its held last attempt ends it.
const DefaultOutageBound = config.DefaultSagaOutageBound

// mayWait reports whether cur's step may still wait for a dependency that
// is down: it has not waited yet, or its first wait began less than the
// outage bound ago.
func (p retryPolicy) mayWait(cur saga.Instance, now time.Time) bool {
	since := cur.Data.OutageSince
	return cur.Data.Waits == 0 || since == nil || now.Sub(*since) < p.outage
}

// waitFor is how long to wait for a dependency that is down: the breaker's
// remaining open time (RetryIn; 0 while its probe is in flight) plus a
// full-jitter sample of the first backoff step, so waiting sagas do not all
// return at once, rounded up to a whole second (the queue's delay
// granularity: the command could not arrive earlier anyway).
func (p retryPolicy) waitFor(err error) time.Duration {
	d := retryAfter(err) + p.backoff.Delay(0)
	if r := d % time.Second; r != 0 || d == 0 {
		d += time.Second - r
	}
	return d
}

// holdFor is how long a step whose last attempt is held back
// (decide) waits: the backoff's cap (or the dependency's hint, when longer)
// plus a full-jitter sample of the first backoff step, rounded up to a
// whole second. The cap, not the first step, spaces these waits, so a
// dependency that fails only this saga is asked about once per cap.
func (p retryPolicy) holdFor(err error) time.Duration {
	d := max(p.backoff.Cap, retryAfter(err)) + p.backoff.Delay(0)
	if r := d % time.Second; r != 0 || d == 0 {
		d += time.Second - r
	}
	return d
}

// retryIn is when a transient failure is retried: after the full-jitter
// backoff for the attempts spent, or the dependency's own hint (an HTTP
// Retry-After) when that is longer; never at once (at least 1 ms, which
// the queue rounds up to its granularity, a second), so a retry always
// goes back through the queue and is never chained in place. A 409 (the
// provider still processing the key: outcome unknown) is such a failure.
func (p retryPolicy) retryIn(err error, spent int) time.Duration {
	return max(p.backoff.Delay(spent), retryAfter(err), time.Millisecond)
}

// retryAfter is err's hint of how long to wait (resilience.RetryAfterer: a
// breaker's remaining open time, a Retry-After header), 0 without one.
func retryAfter(err error) time.Duration {
	var ra resilience.RetryAfterer
	if errors.As(err, &ra) {
		return max(ra.RetryAfter(), 0)
	}
	return 0
}

// refused reports whether a step's call was refused before it reached the
// dependency: a circuit breaker that is open (or half-open with its probe
// in flight), or a full bulkhead.
func refused(err error) bool {
	return errors.Is(err, resilience.ErrOpen) || errors.Is(err, resilience.ErrBulkheadFull)
}

// waiting reports whether a step's failure says its dependency is down
// rather than anything about this saga: the call was refused (refused), or
// it reached the dependency and failed with the breaker open afterwards
// (resilience.ErrDown: its failure opened the breaker, or it was a failed
// half-open probe). Such a failure does not spend the step's attempts while
// the step may still wait (retryPolicy.mayWait).
func waiting(err error) bool {
	return refused(err) || errors.Is(err, resilience.ErrDown)
}

// stepName is the name of what inst runs next: the forward step while
// pending or running, the compensation while compensating.
func stepName(steps saga.Table, inst saga.Instance) (string, saga.Direction) {
	if inst.Step < 0 || inst.Step >= len(steps) {
		return "", ""
	}
	if inst.State == saga.StateCompensating {
		return steps[inst.Step].Compensation, saga.Compensate
	}
	return steps[inst.Step].Name, saga.Forward
}

// maxErrorText bounds the error texts stored with a saga, its step log and
// its dead letter (cut on a character boundary by text.Cut).
const maxErrorText = 1000
