package app

import (
	"strconv"
	"time"

	"ordersaga/shared/app/breakerboard"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/resilience"
)

// hooks turns use-case events into metrics (the metric catalogue is in
// package metrics). Use cases know nothing about metrics: they call plain
// hook functions set at wiring time.
type hooks struct {
	m     metrics.Recorder
	board *breakerboard.Board // the breakers' last states, for operators
}

func (h hooks) breakerChanged(name string, from, to resilience.State) {
	h.m.Add(metrics.BreakerTransitions, 1, "dependency", name, "from", from.String(), "to", to.String())
	h.m.Set(metrics.BreakerState, breakerValue(to), "dependency", name)
	h.board.Set(name, to)
}

// breakerInit exports a new breaker's series at once: state closed (0)
// and its transition counters at 0, so dashboards and alerts see the
// breaker before its first transition.
func (h hooks) breakerInit(name string, s resilience.State) {
	h.board.Set(name, s)
	h.m.Set(metrics.BreakerState, breakerValue(s), "dependency", name)
	for _, t := range [][2]resilience.State{{resilience.StateClosed, resilience.StateOpen},
		{resilience.StateOpen, resilience.StateHalfOpen}, {resilience.StateHalfOpen, resilience.StateOpen},
		{resilience.StateHalfOpen, resilience.StateClosed}} {
		h.m.Add(metrics.BreakerTransitions, 0, "dependency", name, "from", t[0].String(), "to", t[1].String())
	}
}

// breakerValue maps resilience states onto the metric's scale (0 closed,
// 1 half-open, 2 open), which differs from resilience.State's order.
func breakerValue(s resilience.State) float64 {
	switch s {
	case resilience.StateOpen:
		return metrics.BreakerOpen
	case resilience.StateHalfOpen:
		return metrics.BreakerHalfOpen
	default:
		return metrics.BreakerClosed
	}
}

func (h hooks) retryAttempt(ev resilience.AttemptEvent) {
	if ev.Final() {
		h.m.Add(metrics.Retries, 1, "operation", ev.Op, "result", string(ev.Result))
	}
}

func (h hooks) bulkheadRejected(name string) {
	h.m.Add(metrics.BulkheadRejections, 1, "dependency", name)
}

func (h hooks) idempotency(outcome string) {
	h.m.Add(metrics.IdempotencyRequests, 1, "outcome", outcome)
}

func (h hooks) httpRequest(route string, status int, took time.Duration) {
	h.m.Add(metrics.HTTPRequests, 1, "route", route, "status", strconv.Itoa(status))
	h.m.Observe(metrics.HTTPRequestDuration, took.Seconds(), "route", route)
}

func (h hooks) relayHooks() relay.Hooks {
	return relay.Hooks{
		OnPublished: func(dest string, n int) {
			h.m.Add(metrics.OutboxPublished, float64(n), "destination", dest)
			h.m.Add(metrics.QueueSends, float64(n), "queue", dest, "result", "ok")
		},
		OnFailed: func(dest string, n int) {
			h.m.Add(metrics.OutboxFailed, float64(n), "destination", dest)
			h.m.Add(metrics.QueueSends, float64(n), "queue", dest, "result", "error")
		},
		OnDead: func(dest, errorType string) {
			h.m.Add(metrics.DLQAdditions, 1, "queue", "outbox", "error_type", errorType)
		},
	}
}

// backlog records the outbox gauges from a relay report.
func (h hooks) backlog(rep relay.Report) {
	h.m.Set(metrics.OutboxPending, float64(rep.Pending))
	h.m.Set(metrics.OutboxLag, rep.OldestPendingAgeSeconds)
}

func (h hooks) sagaHooks() orchestrator.Hooks {
	return orchestrator.Hooks{
		OnMessage: func(s orchestrator.Status) { h.m.Add(metrics.SagaMessages, 1, "result", string(s)) },
		OnStep: func(step string, dir saga.Direction, out saga.Outcome) {
			h.m.Add(metrics.SagaSteps, 1, "step", step, "direction", string(dir), "status", string(out))
		},
		OnCompensation: func(step string, out saga.Outcome) {
			h.m.Add(metrics.Compensations, 1, "step", step, "status", string(out))
		},
		OnFinished: func(typ string, st saga.State, took time.Duration) {
			h.m.Observe(metrics.SagaDuration, took.Seconds(), "saga_type", typ, "outcome", string(st))
		},
		OnDeadLetter: func(errorType string) {
			h.m.Add(metrics.DLQAdditions, 1, "queue", "saga", "error_type", errorType)
		},
	}
}

func (h hooks) recovery(rep orchestrator.Report) {
	h.m.Add(metrics.RecoveryResent, float64(rep.Resent))
	if rep.GaveUp > 0 { // sagas recovery failed after too many resends: the DLQ-growth alert fires
		h.m.Add(metrics.DLQAdditions, float64(rep.GaveUp), "queue", "saga", "error_type", orchestrator.ErrorTypeStuck)
	}
	h.m.Add(metrics.Reconciled, float64(rep.Reconciled))
}

func (h hooks) received(queue string, n int) {
	h.m.Add(metrics.QueueReceives, float64(n), "queue", queue)
}

func (h hooks) deadLetterSize(queue string, n int) {
	h.m.Set(metrics.DLQSize, float64(n), "queue", queue)
}

func (h hooks) ingested(queue, errorType string) {
	h.m.Add(metrics.DLQAdditions, 1, "queue", queue, "error_type", errorType)
}

func (h hooks) redriveAction(action, outcome string) {
	h.m.Add(metrics.RedriveActions, 1, "action", action, "outcome", outcome)
}
