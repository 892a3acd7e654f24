package chaos

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/text"
)

// stepUnavailable is the transient failure the step table's fault decorator
// forces on a step run (Faults.StepTransient).
func stepUnavailable(step string) error {
	return apperr.New(apperr.Transient, "chaos: %s unavailable", step)
}

// harnessFault reports whether a step-log error is one of the harness's own
// faults of the store or of the step — not an answer of the payment
// provider, which the harness fails through the simulator (and whose
// "chaos: payment answer lost" comes wrapped in the payment client's error).
func harnessFault(msg string) bool {
	for _, e := range []error{errStoreDown, errAfterTx, errReadsDown} {
		if strings.Contains(msg, e.Error()) {
			return true
		}
	}
	return strings.HasPrefix(msg, stepUnavailable(saga.StepProcessPayment).Error())
}

// providerDown reports whether a step-log error says the payment breaker
// judged the provider down: it refused the call, or the call's failure
// found it open (the texts of resilience.OpenError and DownError).
func providerDown(msg string) bool {
	refused := (&resilience.OpenError{Name: payments.DefaultName}).Error()
	opened := (&resilience.DownError{Err: errors.New(""), Name: payments.DefaultName}).Error()
	return strings.Contains(msg, refused) || strings.HasSuffix(msg, opened)
}

// outageCancel: no payment outage shorter than the outage bound cancelled
// an order (README, "A provider outage cancels no order"). The provider
// accepts every amount up to its decline limit, so for a compensated order
// under it whose process_payment failed, the check reads the step's log
// (judgePayment): it is a violation when the step was refused for good,
// when a failure of a provider the breaker judged down spent an attempt
// within the bound, or when a transient failure ended the step before the
// bound had passed since its first wait: the step holds its last attempt
// for the bound whatever spent the ones before (the provider's failures
// through a closed breaker, or the harness's own store and step faults),
// so only a failure after the bound may end it.
func (c *checker) outageCancel() {
	limit := c.w.cfg.Payment.DeclineAbove
	for _, id := range c.s.sagaIDs {
		inst := c.s.sagas[id]
		if inst.State != saga.StateCompensated || inst.Data.TotalMinor > limit {
			continue
		}
		if why := judgePayment(c.s.logs[id], inst.Data.FailureReason, orchestrator.DefaultOutageBound); why != "" {
			c.fail("order %s (total %d, under the decline limit %d) was cancelled by a provider outage: %s",
				inst.Data.OrderID, inst.Data.TotalMinor, limit, why)
		}
	}
}

// judgePayment judges one saga's forward process_payment runs (log, the
// saga's failure reason, the outage bound) and returns why they broke the
// outage promise, or "" when they did not or the step never failed.
func judgePayment(log []saga.LogEntry, reason string, bound time.Duration) string {
	var runs []saga.LogEntry
	failed := false
	for _, e := range log {
		if e.Step == saga.StepProcessPayment && e.Direction == saga.Forward {
			runs = append(runs, e)
			failed = failed || e.Outcome == saga.OutcomeFailed
		}
	}
	if !failed {
		return ""
	}
	var firstWait time.Time
	spent, byHarness := 0, 0
	var last saga.LogEntry
	for _, e := range runs {
		switch e.Outcome {
		case saga.OutcomeWaiting:
			if firstWait.IsZero() {
				firstWait = e.At
			}
			continue
		case saga.OutcomeRetry, saga.OutcomeFailed:
		default:
			continue
		}
		spent++
		last = e
		if harnessFault(e.Error) {
			byHarness++
			continue
		}
		if providerDown(e.Error) && (firstWait.IsZero() || e.At.Sub(firstWait) < bound) {
			return fmt.Sprintf("process_payment spent attempt %d on a provider that was down, %s after its first wait (the bound is %s): %s",
				e.Attempt, e.At.Sub(firstWait).Round(time.Second), bound, text.Clip(e.Error, 160))
		}
	}
	if reason != fmt.Sprintf("%s: gave up after %d attempts", saga.StepProcessPayment, spent) {
		return fmt.Sprintf("process_payment was refused for good at attempt %d (%s): %s",
			last.Attempt, text.Clip(reason, 80), text.Clip(last.Error, 160))
	}
	if firstWait.IsZero() || last.At.Sub(firstWait) < bound {
		held := "without waiting"
		if !firstWait.IsZero() {
			held = fmt.Sprintf("%s after its first wait", last.At.Sub(firstWait).Round(time.Second))
		}
		return fmt.Sprintf("process_payment gave up %s (the bound is %s): its last attempt was not held for the bound; %d of its %d attempts were spent by the provider's failures (the last, attempt %d: %s)",
			held, bound, spent-byHarness, spent, last.Attempt, text.Clip(last.Error, 160))
	}
	return ""
}
