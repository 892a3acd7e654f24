package saga

import "time"

// Step names of CreateOrderSaga.
const (
	StepCreateOrder      = "create_order"
	StepCancelOrder      = "cancel_order"
	StepReserveInventory = "reserve_inventory"
	StepReleaseInventory = "release_inventory"
	StepProcessPayment   = "process_payment"
	StepRefundPayment    = "refund_payment"
	StepConfirmOrder     = "confirm_order"
)

// StepDef is what a row of a step table says about a step besides the code
// that runs it: its name, the name of the compensation that undoes it, its
// timeout and its retry policy. The executable table (each row with the
// functions that do and undo its step) is orchestrator.CreateOrderSaga;
// Table is its description, for code that only names steps.
type StepDef struct {
	Name         string
	Compensation string
	// Timeout bounds one attempt of the step or of its compensation.
	Timeout time.Duration
	RetryPolicy
}

// RetryPolicy is how a step and its compensation are retried: their
// attempt budgets and, where the step needs its own, the spacing of its
// retries and how long it waits for a dependency that is down. A zero
// duration takes the advancer's (its backoff and outage bound); a negative
// one is refused when the advancer is built.
type RetryPolicy struct {
	// MaxAttempts of the forward step before a transient failure is treated as
	// permanent (and compensation starts). At least 1.
	MaxAttempts int
	// MaxCompensationAttempts before the saga gives up and fails. At least 1.
	MaxCompensationAttempts int
	// BackoffBase and BackoffCap are the full-jitter backoff of the step's
	// retries: the first retry waits up to BackoffBase, each next one up to
	// twice as long, never more than BackoffCap.
	BackoffBase, BackoffCap time.Duration
	// OutageBound is how long the step waits for a dependency that is down
	// (its breaker open), from its first wait, before such failures spend
	// attempts.
	OutageBound time.Duration
}

// Table describes a saga's steps, in order (Instance.Step indexes it).
type Table []StepDef

// LongestTimeout is the longest Timeout in t: a saga lease must exceed it,
// or a second advancer could take a saga whose step is still running.
func (t Table) LongestTimeout() time.Duration {
	var d time.Duration
	for _, s := range t {
		d = max(d, s.Timeout)
	}
	return d
}

// StepName returns the name of the step i is at in t: the forward step
// while pending or running, the compensation while compensating, "" when
// finished (or outside t).
func (t Table) StepName(i Instance) string {
	if i.Step < 0 || i.Step >= len(t) {
		return ""
	}
	switch i.State {
	case StatePending, StateRunning:
		return t[i.Step].Name
	case StateCompensating:
		return t[i.Step].Compensation
	}
	return ""
}
