package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/outbox"
)

// deadlineRecorder is a Dispatcher that records how long each dispatch was
// given, then hands the rows on.
type deadlineRecorder struct {
	inner interface {
		Dispatch(context.Context, []outbox.Event)
	}
	left []time.Duration
}

func (d *deadlineRecorder) Dispatch(ctx context.Context, events []outbox.Event) {
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.left = append(d.left, left)
	d.inner.Dispatch(ctx, events)
}

// Recovery's resend is dispatched after commit within the same default
// timeout as every other writer's (DefaultDispatchTimeout, 2 s).
func TestRecoveryDispatchUsesTheDefaultTimeout(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	_, _ = e.place(item("sku-1", 1, 100))
	e.queue = nil // the first command is lost: the saga gets stuck
	_ = e.disp.take()
	rec := &deadlineRecorder{inner: e.disp}
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.Dispatcher, c.DispatchTimeout = rec, 0 })
	if got := e.rec.Config().DispatchTimeout; got != orchestrator.DefaultDispatchTimeout {
		t.Fatalf("recovery dispatch timeout %v, want %v", got, orchestrator.DefaultDispatchTimeout)
	}
	e.clock.Advance(e.rec.Config().StuckAfter + time.Second)
	if rep := e.runRecovery(); rep.Resent != 1 {
		t.Fatalf("resent %d, want 1", rep.Resent)
	}
	if len(rec.left) != 1 || rec.left[0] <= 0 || rec.left[0] > orchestrator.DefaultDispatchTimeout {
		t.Fatalf("dispatch deadlines %v, want one within %v", rec.left, orchestrator.DefaultDispatchTimeout)
	}
}
