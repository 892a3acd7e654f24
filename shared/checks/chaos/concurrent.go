package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pacing of a concurrent run, in real time.
const (
	tickEvery    = time.Millisecond      // the clock driver's period
	tickBy       = 20 * time.Millisecond // fake time per tick: 20× real time
	idlePause    = 2 * time.Millisecond  // an advancer that found no message
	relayPause   = 5 * time.Millisecond  // between relay invocations of one instance
	recoverPause = 50 * time.Millisecond // between recovery invocations
	samplePause  = 20 * time.Millisecond // between stock samples
	maxPhase     = 10 * time.Minute      // a phase that takes longer is reported as an error
)

// injectConcurrent places the orders from Options.Clients goroutines while
// every advancer, relay and recovery instance runs its trigger loop in its
// own goroutine, on the one SQLite file, and a driver moves the fake clock.
// A Vary run stops the components half-way and redeploys them with another
// shard count (rows in flight keep the shard they were stamped with).
func (w *world) injectConcurrent(ctx context.Context) error {
	half := w.opts.Orders
	if w.opts.Vary {
		half = w.opts.Orders / 2
	}
	if err := w.phase(ctx, 0, half); err != nil {
		return err
	}
	if half < w.opts.Orders {
		if err := w.redeploy(ctx); err != nil {
			return err
		}
		if err := w.phase(ctx, half, w.opts.Orders); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// phase runs orders [from, to) concurrently and returns once every client
// finished and every component loop stopped.
func (w *world) phase(ctx context.Context, from, to int) error {
	ctx, cancel := context.WithTimeout(ctx, maxPhase)
	defer cancel()
	stop := make(chan struct{})
	var loops sync.WaitGroup
	loop := func(pause time.Duration, body func()) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				body()
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		}()
	}
	loop(tickEvery, func() { w.clock.Advance(tickBy) })
	for _, a := range w.roles["advancer"] {
		loop(0, func() {
			if w.pump(ctx, a, 1) == 0 {
				time.Sleep(idlePause)
			}
		})
	}
	for _, a := range w.roles["relay"] {
		loop(relayPause, func() { w.runRelay(ctx, a) })
	}
	for _, a := range w.roles["recovery"] {
		loop(recoverPause, func() { w.runRecovery(ctx, a) })
	}
	loop(samplePause, func() { w.sampleStock(ctx); w.operate(ctx) })

	var next atomic.Int64
	next.Store(int64(from))
	var placed atomic.Int64
	errs := make(chan error, 1)
	var clients sync.WaitGroup
	apis := w.roles["api"]
	step := int64(max((to-from)/5, 1))
	for c := 0; c < max(w.opts.Clients, 1); c++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			a := apis[c%len(apis)]
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				if err := w.placeOrder(ctx, a, i); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				if n := placed.Add(1); n%step == 0 {
					fmt.Fprintf(w.opts.Log, "chaos: %d/%d orders placed concurrently (fake time %s)\n",
						int64(from)+n, w.opts.Orders, w.clock.Elapsed().Round(time.Second))
				}
			}
		}()
	}
	clients.Wait()
	close(stop)
	loops.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("chaos: concurrent phase: %w", err)
	}
	return nil
}
