package orchestrator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/saga"
)

type ctxMark struct{}

// Every decorated action, a participant call or an action inside the save
// transaction, asks Fail and then CrashAfter with the context it was run
// with and the step run it belongs to (name, direction, the saga as the
// action received it, whether it runs inside the save transaction): a decision keyed on them is the same for every run
// of one transaction. A failure Fail decides replaces the action, and a
// crash wraps ErrCrash.
func TestInjectFaultsAsksWithTheContextAndTheStepRun(t *testing.T) {
	var asked []string
	var got []orchestrator.FaultPoint
	errFail, errDie := errors.New("fail"), errors.New("die")
	note := func(what string) func(context.Context, orchestrator.FaultPoint) error {
		return func(ctx context.Context, at orchestrator.FaultPoint) error {
			if ctx.Value(ctxMark{}) != "run-1" {
				t.Errorf("%s %s/%s: the action's context did not reach the fault", what, at.Step, at.Dir)
			}
			asked = append(asked, what)
			got = append(got, at)
			if what == "fail" {
				return errFail
			}
			return errDie
		}
	}
	steps := orchestrator.InjectFaults(orchestrator.CreateOrderSaga, orchestrator.Faults{Fail: note("fail"), CrashAfter: note("crash")})
	ctx := context.WithValue(context.Background(), ctxMark{}, "run-1")
	for i, st := range steps {
		for _, c := range []struct {
			act  orchestrator.Action
			name string
			dir  saga.Direction
		}{{st.Do, st.Name, saga.Forward}, {st.Undo, st.Compensation, saga.Compensate}} {
			asked, got = nil, nil
			inst := saga.Instance{ID: "saga-1", Step: i, Attempts: 2}
			var err error
			switch {
			case c.act.Call != nil:
				err = c.act.Call(ctx, orchestrator.Participants{}, inst).Err
			case c.act.InTx != nil:
				_, err = c.act.InTx(ctx, nil, orchestrator.Participants{}, nil, inst, time.Now())
			default:
				continue
			}
			if !errors.Is(err, orchestrator.ErrCrash) || !errors.Is(err, errDie) {
				t.Errorf("%s/%s: error %v, want the crash (ErrCrash)", c.name, c.dir, err)
			}
			if len(asked) != 2 || asked[0] != "fail" || asked[1] != "crash" {
				t.Fatalf("%s/%s: asked %v, want [fail crash]", c.name, c.dir, asked)
			}
			for _, at := range got {
				if at.Step != c.name || at.Dir != c.dir || at.Saga.ID != "saga-1" || at.Saga.Step != i || at.Saga.Attempts != 2 ||
					at.InTx != (c.act.InTx != nil) {
					t.Errorf("%s/%s: asked with %+v", c.name, c.dir, at)
				}
			}
		}
	}
}
