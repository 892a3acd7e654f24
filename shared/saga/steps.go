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

// StepDef is one row of the step table: a forward action, the compensation
// that undoes it, and the per-step timeout and retry budget.
type StepDef struct {
	Name         string
	Compensation string
	// Timeout bounds one attempt of the step or of its compensation.
	Timeout time.Duration
	// MaxAttempts of the forward step before a transient failure is treated as
	// permanent (and compensation starts).
	MaxAttempts int
	// MaxCompensationAttempts before the saga gives up and fails.
	MaxCompensationAttempts int
}

// CreateOrderSteps is the step table of CreateOrderSaga, in order. Only
// completed steps are compensated, in reverse order. confirm_order is last so
// that nothing after it can fail; uncompensatable actions (notifications)
// belong after it, driven by the order.confirmed event.
var CreateOrderSteps = []StepDef{
	{Name: StepCreateOrder, Compensation: StepCancelOrder, Timeout: 5 * time.Second, MaxAttempts: 5, MaxCompensationAttempts: 10},
	{Name: StepReserveInventory, Compensation: StepReleaseInventory, Timeout: 5 * time.Second, MaxAttempts: 5, MaxCompensationAttempts: 10},
	{Name: StepProcessPayment, Compensation: StepRefundPayment, Timeout: 10 * time.Second, MaxAttempts: 5, MaxCompensationAttempts: 10},
	{Name: StepConfirmOrder, Compensation: StepCancelOrder, Timeout: 5 * time.Second, MaxAttempts: 5, MaxCompensationAttempts: 10},
}

// LongestTimeout is the longest Timeout in steps: a saga lease must exceed
// it, or a second advancer could take a saga whose step is still running.
func LongestTimeout(steps []StepDef) time.Duration {
	var d time.Duration
	for _, s := range steps {
		d = max(d, s.Timeout)
	}
	return d
}

// StepName returns the name of the step the instance is at: the forward step
// while pending or running, the compensation while compensating, "" when finished.
func (i Instance) StepName() string {
	if i.Step < 0 || i.Step >= len(CreateOrderSteps) {
		return ""
	}
	switch i.State {
	case StatePending, StateRunning:
		return CreateOrderSteps[i.Step].Name
	case StateCompensating:
		return CreateOrderSteps[i.Step].Compensation
	}
	return ""
}
