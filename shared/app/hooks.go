package app

import (
	"time"

	"ordersaga/shared/orchestrator"
	"ordersaga/shared/resilience"
	"ordersaga/shared/saga"
)

// hooks turns use-case events into metrics. Until the metrics port is wired
// every method is a no-op; the shapes are final.
type hooks struct{}

func (hooks) breakerChanged(name string, from, to resilience.State) {}
func (hooks) retryAttempt(ev resilience.AttemptEvent)               {}
func (hooks) bulkheadRejected(name string)                          {}

func (h hooks) sagaHooks() orchestrator.Hooks {
	return orchestrator.Hooks{
		OnMessage:      func(orchestrator.Status) {},
		OnStep:         func(string, saga.Direction, saga.Outcome) {},
		OnCompensation: func(string, saga.Outcome) {},
		OnFinished:     func(string, saga.State, time.Duration) {},
		OnDeadLetter:   func(string) {},
	}
}
