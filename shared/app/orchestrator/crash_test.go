package orchestrator_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/triggers"
)

// localRecoveryPeriod is how often the local runner fires sagarecovery.
func localRecoveryPeriod(t *testing.T) time.Duration {
	_, file, _, _ := runtime.Caller(0)
	f, err := triggers.Load(filepath.Join(filepath.Dir(file), "..", "..", "..", "triggers", "triggers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range f.Timers {
		if tm.Function == "sagarecovery" {
			d, err := time.ParseDuration(tm.LocalPeriod)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatal("no sagarecovery timer")
	return 0
}

// TestCrashedRunnerResumesWithinALease simulates kill -9 of the process
// running the advancer, with the default settings (SAGA_LEASE,
// RECOVERY_STUCK_AFTER) and the local recovery period: the process had
// received a batch of messages (held invisible by the queue for its whole
// visibility timeout, 120 s), had taken one saga's lease and run its step's
// effect, and dies. Other sagas' messages are still in the queue. Every
// order must still reach its final state within 45 s of the restart.
func TestCrashedRunnerResumesWithinALease(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 100}})
	def := config.Default()
	e.advWith(func(c *orchestrator.AdvancerConfig) { c.Lease = def.Saga.Lease })
	e.recWith(func(c *orchestrator.RecoveryConfig) { c.StuckAfter = def.Recovery.StuckAfter })
	period := localRecoveryPeriod(t)
	const orders, batch = 12, 10
	for i := 0; i < orders; i++ {
		e.place(item("sku-1", 1, 100))
	}
	// The dying process receives a batch; its first message takes the
	// lease, runs steps in place up to process_payment's effect, and the
	// process is killed before saving it. The rest of the batch is held
	// invisible; two messages are still in the queue.
	crashed := false
	e.afterStep = func(step string, _ saga.Direction) error {
		if step == saga.StepProcessPayment && !crashed {
			crashed = true
			return errCrash
		}
		return nil
	}
	received := e.queue[:batch]
	e.queue = e.queue[batch:]
	if _, err := e.adv.Handle(context.Background(), received[0].msg); err == nil || !crashed {
		t.Fatal("setup: the first message of the batch should crash")
	}
	e.afterStep = nil
	restart := e.clock.Now()

	// After the restart: the queue delivers what it still has (due ones),
	// the recovery timer fires every period; time moves in 1 s ticks.
	for tick := 0; e.unfinished() > 0; tick++ {
		if elapsed := e.clock.Now().Sub(restart); elapsed > 45*time.Second {
			t.Fatalf("%d of %d orders unfinished %s after the restart (lease %s, stuck after %s)",
				e.unfinished(), orders, elapsed, e.adv.Config().Lease, e.rec.Config().StuckAfter)
		}
		var later []delivery
		e.relay() // the relay publishes what a dead advancer left leased, once the lease lapsed
		for len(e.queue) > 0 {
			d := e.queue[0]
			e.queue = e.queue[1:]
			if d.due.After(e.clock.Now()) {
				later = append(later, d)
				continue
			}
			if _, err := e.adv.Handle(context.Background(), d.msg); err != nil {
				t.Fatal(err)
			}
			e.pump()
		}
		e.queue = append(e.queue, later...)
		if tick > 0 && time.Duration(tick)*time.Second%period == 0 {
			e.runRecovery()
		}
		e.clock.Advance(time.Second)
	}
	e.checkInvariants()
}
