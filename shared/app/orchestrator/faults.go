package orchestrator

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Faults are failures and crashes injected into the actions of a step
// table (InjectFaults); tests and the chaos harness build an advancer over
// the decorated table. Both functions are optional and are asked once per
// run of an action.
//
// An InTx action runs once per run of its save transaction, and a store
// may run one transaction more than once (SQLite after a busy database or
// a failed group commit, YDB after a lock conflict), so the same step run
// can ask twice. A decision meant once per step run must therefore be a
// pure function of its arguments — of at (the saga's token) and of what
// the caller put into ctx — never the next value of a shared random
// stream, or two runs of one seed diverge with the store's retries.
type Faults struct {
	// Fail, when it returns an error, makes the step or compensation fail
	// with it instead of running its action.
	Fail func(ctx context.Context, at FaultPoint) error
	// CrashAfter is asked after the action (or the failure Fail decided):
	// an error stands for the death of the process after the step's
	// effect and before its save. For a Call action the effect happened
	// and the step's save never runs; for an InTx action the error fails
	// the save transaction, so the effect, and every step folded into that
	// transaction, is rolled back. Either way Handle returns the error
	// (wrapping ErrCrash) at once, saving and releasing nothing.
	CrashAfter func(ctx context.Context, at FaultPoint) error
}

// FaultPoint names one run of a decorated action.
type FaultPoint struct {
	// Step is the name of the step or compensation.
	Step string
	// Dir is the direction: Forward runs the step, Compensate undoes it.
	Dir saga.Direction
	// Saga is the saga as the action received it; its ID, Step, Attempts
	// and Data.Epoch are the token the run belongs to.
	Saga saga.Instance
	// InTx is set for an action that runs inside the save transaction: it
	// has no effect outside the store, so a crash there is the death of
	// the process during the save (the transaction rolls back), not after
	// an effect.
	InTx bool
}

// InjectFaults returns a copy of steps whose every action is decorated
// with f. steps itself is not changed.
func InjectFaults(steps Steps, f Faults) Steps {
	out := make(Steps, len(steps))
	for i, st := range steps {
		st.Do = f.decorate(st.Name, saga.Forward, st.Do)
		st.Undo = f.decorate(st.Compensation, saga.Compensate, st.Undo)
		out[i] = st
	}
	return out
}

// decorate wraps the action of step name in direction dir.
func (f Faults) decorate(name string, dir saga.Direction, act Action) Action {
	if call := act.Call; call != nil {
		act.Call = func(ctx context.Context, p Participants, inst saga.Instance) Effect {
			at := FaultPoint{Step: name, Dir: dir, Saga: inst}
			var eff Effect
			if err := f.fail(ctx, at); err != nil {
				eff = Effect{Err: err}
			} else {
				eff = call(ctx, p, inst)
			}
			if err := f.crash(ctx, at); err != nil {
				return Effect{Err: err}
			}
			return eff
		}
	}
	if inTx := act.InTx; inTx != nil {
		act.InTx = func(ctx context.Context, tx store.Tx, p Participants, k *Known, inst saga.Instance, now time.Time) (Effect, error) {
			at := FaultPoint{Step: name, Dir: dir, Saga: inst, InTx: true}
			var eff Effect
			if err := f.fail(ctx, at); err != nil {
				eff = Effect{Err: err}
			} else {
				var err error
				if eff, err = inTx(ctx, tx, p, k, inst, now); err != nil {
					return eff, err
				}
			}
			if err := f.crash(ctx, at); err != nil {
				return Effect{}, err
			}
			return eff, nil
		}
	}
	return act
}

func (f Faults) fail(ctx context.Context, at FaultPoint) error {
	if f.Fail == nil {
		return nil
	}
	return f.Fail(ctx, at)
}

// crash is CrashAfter's error wrapped in ErrCrash.
func (f Faults) crash(ctx context.Context, at FaultPoint) error {
	if f.CrashAfter == nil {
		return nil
	}
	if err := f.CrashAfter(ctx, at); err != nil {
		return fmt.Errorf("%w: %w", ErrCrash, err)
	}
	return nil
}
