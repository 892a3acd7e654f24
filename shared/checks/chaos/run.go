package chaos

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Pacing of the run, in fake time.
const (
	relayPeriod    = 10 * time.Second // the relay's timer (the fast path does most of the work)
	recoveryPeriod = time.Minute      // the recovery's timer
	drainStep      = 20 * time.Second // clock step between drain rounds
	maxDrainRounds = 2000
	maxSampled     = 20 // stock violations kept from sampling
)

// inject places the orders one after another with faults on, playing the
// triggers between them: the advancer's queue trigger after about half of
// the orders (so batches mix sagas), the relay and the recovery on their
// timers. A Vary run redeploys with another shard count half-way; a
// Concurrent run places them from several clients at once instead.
func (w *world) inject(ctx context.Context) error {
	w.in.set(true)
	w.sim.SetFaults(w.faults.PaymentFailure, 0, w.faults.PaymentLatency)
	if w.opts.Concurrent {
		return w.injectConcurrent(ctx)
	}
	w.lastRelay, w.lastRecover = w.clock.Now(), w.clock.Now()
	step := max(w.opts.Orders/10, 1)
	for i := 0; i < w.opts.Orders; i++ {
		if w.opts.Vary && i == w.opts.Orders/2 {
			if err := w.redeploy(ctx); err != nil {
				return err
			}
		}
		w.clock.Advance(w.beforeOrder(ctx, i, time.Duration(w.wl.IntN(1500))*time.Millisecond))
		if err := w.placeOrder(ctx, w.pick("api"), i); err != nil {
			return err
		}
		if w.wl.Float64() < 0.5 {
			w.pump(ctx, w.pick("advancer"), max(w.faults.BatchesPerTick, 1))
		}
		now := w.clock.Now()
		if now.Sub(w.lastRelay) >= relayPeriod {
			w.lastRelay = now
			w.runRelay(ctx, w.pick("relay"))
		}
		if now.Sub(w.lastRecover) >= recoveryPeriod {
			w.lastRecover = now
			w.runRecovery(ctx, w.pick("recovery"))
		}
		if i%5 == 0 {
			w.sampleStock(ctx)
			w.operate(ctx)
		}
		if (i+1)%step == 0 {
			fmt.Fprintf(w.opts.Log, "chaos: %d/%d orders placed (fake time %s)\n", i+1, w.opts.Orders, w.clock.Elapsed().Round(time.Second))
		}
	}
	return ctx.Err()
}

// redeploy replaces every instance with one built with another shard count
// (OUTBOX_SHARDS changed by a deploy while rows are in flight).
func (w *world) redeploy(ctx context.Context) error {
	cfg := w.cfg
	cfg.Relay.Shards = redeployShards(cfg.Relay.Shards, w.opts.Seed)
	fmt.Fprintf(w.opts.Log, "chaos: redeploy with OUTBOX_SHARDS=%d (was %d)\n", cfg.Relay.Shards, w.cfg.Relay.Shards)
	return w.deploy(ctx, cfg)
}

// stallRounds is how many drain rounds (of drainStep fake time each) without
// progress end the drain: 45 minutes, longer than any backoff, lease,
// breaker or recovery window a run uses.
const stallRounds = 135

// drain stops injecting and lets the triggers run, advancing the clock
// between rounds, until every saga finished, no outbox row is pending and
// the command queue is empty — or the round limit is reached, or nothing
// changed for stallRounds rounds (the checker then reports what is left).
// After a stall it runs recovery a few more times, noting whether the dead
// letters of the unfinished sagas keep growing. A last round after the
// longest queue delay flushes delayed messages.
func (w *world) drain(ctx context.Context) error {
	w.in.set(false)
	w.sim.SetFaults(0, 0, 0)
	fmt.Fprintf(w.opts.Log, "chaos: faults off, draining\n")
	round := func() {
		w.pumpAll(ctx)
		w.runRelay(ctx, w.pick("relay"))
		w.pumpAll(ctx)
		w.runRecovery(ctx, w.pick("recovery"))
		w.pumpAll(ctx)
	}
	best, same := [2]int{-1, -1}, 0
	for w.drainRounds = 1; w.drainRounds <= maxDrainRounds; w.drainRounds++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		round()
		left, err := w.leftover(ctx)
		if err != nil {
			return err
		}
		if left == "" {
			break
		}
		// Progress is a new low of unfinished sagas or of pending rows.
		n := w.lastLeft
		improved := best[0] < 0 || n[0] < best[0] || n[1] < best[1]
		if best[0] < 0 {
			best = n
		}
		best = [2]int{min(best[0], n[0]), min(best[1], n[1])}
		if improved {
			same = 0
		} else {
			same++
		}
		if same >= stallRounds {
			w.stall = left
			break
		}
		w.sampleStock(ctx)
		w.clock.Advance(drainStep)
	}
	if w.stall != "" {
		before, err := w.deadOfUnfinished(ctx)
		if err != nil {
			return err
		}
		for k := 0; k < 3; k++ {
			w.clock.Advance(w.cfg.Recovery.StuckAfter + w.cfg.Saga.Lease + w.cfg.Relay.BackoffCap)
			round()
		}
		after, err := w.deadOfUnfinished(ctx)
		if err != nil {
			return err
		}
		w.deadGrowth = map[string][2]int{}
		for id, n := range after {
			w.deadGrowth[id] = [2]int{before[id], n}
		}
	}
	w.clock.Advance(queue.MaxDelay + w.visibility)
	round()
	return ctx.Err()
}

// pumpAll runs the advancer's trigger until the command queue has nothing
// visible.
func (w *world) pumpAll(ctx context.Context) {
	for i := 0; i < 100_000 && ctx.Err() == nil; i++ {
		if w.pump(ctx, w.pick("advancer"), 10) == 0 {
			return
		}
	}
}

// leftover describes the work still outstanding ("" when quiescent).
func (w *world) leftover(ctx context.Context) (string, error) {
	var unfinished, pending int
	err := w.sqlite.View(ctx, func(ctx context.Context, tx store.Tx) error {
		unfinished = 0
		for _, st := range []saga.State{saga.StatePending, saga.StateRunning, saga.StateCompensating} {
			l, err := tx.ListSagasByState(ctx, st, time.Time{}, 1000)
			if err != nil {
				return err
			}
			unfinished += len(l)
		}
		var err error
		pending, _, err = tx.OutboxBacklog(ctx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("chaos: read backlog: %w", err)
	}
	visible, inFlight, err := w.fqueue.Depth(ctx, w.cmdURL)
	if err != nil {
		return "", fmt.Errorf("chaos: queue depth: %w", err)
	}
	w.lastLeft = [2]int{unfinished, pending}
	if unfinished+pending+visible+inFlight == 0 {
		return "", nil
	}
	return fmt.Sprintf("%d unfinished sagas, %d pending outbox rows, %d+%d queued commands",
		unfinished, pending, visible, inFlight), nil
}

// sampleStock checks the stock invariants at this instant: nothing
// negative (no stock row, no sub-row), and every unit available, reserved
// or sold (sub-rows summed).
func (w *world) sampleStock(ctx context.Context) {
	var all []inventory.Stock
	err := w.sqlite.View(ctx, func(ctx context.Context, tx store.Tx) (err error) {
		all, err = stock.ListIn(ctx, tx)
		return err
	})
	if err != nil || len(w.sampled) >= maxSampled {
		return
	}
	at := w.clock.Elapsed().Round(time.Millisecond)
	w.sampleShards(ctx, at.String())
	for _, st := range all {
		if st.Available < 0 || st.Reserved < 0 || st.Sold < 0 {
			w.sampled = append(w.sampled, fmt.Sprintf("stock %s negative at +%s: available %d, reserved %d, sold %d", st.SKU, at, st.Available, st.Reserved, st.Sold))
		}
		if st.Available+st.Reserved+st.Sold != w.initial[st.SKU] {
			w.sampled = append(w.sampled, fmt.Sprintf("stock %s not conserved at +%s: available %d + reserved %d + sold %d != initial %d",
				st.SKU, at, st.Available, st.Reserved, st.Sold, w.initial[st.SKU]))
		}
	}
}
