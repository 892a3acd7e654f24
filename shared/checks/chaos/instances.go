package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// roleNames are the components a multi-instance run deploys, in the order
// their instances are built (and their clock offsets drawn).
var roleNames = []string{"api", "advancer", "relay", "recovery"}

// instances lists every App of the run once (w.app first).
func (w *world) instances() []*app.App {
	seen := map[*app.App]bool{w.app: true}
	out := []*app.App{w.app}
	for _, r := range roleNames {
		for _, a := range w.roles[r] {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// pick returns the next instance of a role, round robin (no random draw,
// so a sequential run stays reproducible).
func (w *world) pick(role string) *app.App {
	l := w.roles[role]
	return l[int(w.rr.Add(1)-1)%len(l)]
}

// counts is how many instances of each role a multi-instance run deploys.
func (w *world) counts() map[string]int {
	if !w.opts.Concurrent {
		return map[string]int{"api": 2, "advancer": 2, "relay": 2, "recovery": 1}
	}
	return map[string]int{"api": 2, "advancer": max(w.opts.Advancers, 1), "relay": max(w.opts.Relays, 1), "recovery": 1}
}

// deploy replaces every component instance with new ones built from cfg
// over the shared (fault-injecting) store and queue — a redeploy. Each gets
// its own lease owner, breaker and, with Skew, its own clock offset drawn
// from the workload stream.
func (w *world) deploy(ctx context.Context, cfg config.Config) error {
	gen := w.deploys // distinguishes the owners of successive deploys
	w.deploys++
	roles := map[string][]*app.App{}
	counts := w.counts()
	n := uint64(len(w.instances()))
	for _, r := range roleNames {
		for i := 0; i < counts[r]; i++ {
			var skew time.Duration
			if w.opts.Skew > 0 {
				skew = time.Duration(w.wl.Int64N(int64(2*w.opts.Skew)+1) - int64(w.opts.Skew)).Truncate(time.Microsecond)
			}
			name := fmt.Sprintf("%s-%d.%d", r, i, gen)
			now := w.skewed(skew)
			a, err := app.New(ctx, cfg, app.Use(app.Ports{Store: w.fstore, Queue: w.fqueue}),
				w.instanceOptions(cfg, app.Options{Now: now, NewID: w.newID, Log: w.logger, Owner: name}, n))
			if err != nil {
				return fmt.Errorf("chaos: build instance %s: %w", name, err)
			}
			n++
			roles[r] = append(roles[r], a)
			if skew != 0 {
				w.settings = append(w.settings, fmt.Sprintf("clock of %s %+v", name, skew))
			}
		}
	}
	old := w.instances()
	w.roles, w.cfg = roles, cfg
	for _, a := range old {
		if a != w.app {
			_ = a.Close()
		}
	}
	w.settings = append(w.settings, fmt.Sprintf("deploy %d: OUTBOX_SHARDS=%d SAGA_LEASE=%s RELAY_LEASE=%s RECOVERY_STUCK_AFTER=%s PAYMENT_BREAKER_THRESHOLD=%d PAYMENT_BREAKER_OPEN_FOR=%s",
		gen, cfg.Relay.Shards, cfg.Saga.Lease, cfg.Relay.Lease, cfg.Recovery.StuckAfter, cfg.Payment.BreakerThreshold, cfg.Payment.BreakerOpenFor))
	return nil
}

// skewed is a clock offset from the run's clock by d.
func (w *world) skewed(d time.Duration) func() time.Time {
	if d == 0 {
		return w.clock.Now
	}
	return func() time.Time { return w.clock.Now().Add(d) }
}

// vary draws the settings of a Vary run from the seed: shards, leases,
// the recovery window and a breaker that stays open longer than the payment
// step's retries last (5 attempts with full-jitter backoff of at most
// 0.5 s·2^n capped at SAGA_BACKOFF_CAP: about 7.5 s in all).
func (w *world) vary(cfg *config.Config) {
	r := rand.New(rand.NewPCG(w.opts.Seed, 0x5e77))
	pickD := func(ds ...time.Duration) time.Duration { return ds[r.IntN(len(ds))] }
	cfg.Relay.Shards = 2 + r.IntN(3)                                                       // 2..4, lowered half-way (redeployShards)
	cfg.Saga.Lease = pickD(11*time.Second, 15*time.Second, 20*time.Second, 30*time.Second) // above the longest step timeout (10 s), as NewAdvancer requires
	cfg.Relay.Lease = pickD(2*time.Second, 5*time.Second, 30*time.Second)
	cfg.Recovery.StuckAfter = pickD(20*time.Second, time.Minute, 2*time.Minute)
	cfg.Payment.BreakerThreshold = 2 + r.IntN(4)
	cfg.Payment.BreakerOpenFor = pickD(10*time.Second, 20*time.Second, 45*time.Second)
}

// redeployShards is the shard count of the half-way redeploy: lower than
// the first (rows stamped with a higher shard must still be relayed), or
// higher when the first was 1.
func redeployShards(first int, seed uint64) int {
	if first <= 1 {
		return 3
	}
	return 1 + int(seed%uint64(first-1)) // 1..first-1
}

// lockedSource makes a rand.Source safe for concurrent use (rand.Rand
// holds no state of its own in math/rand/v2).
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}
