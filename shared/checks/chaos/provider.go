package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
)

// effects is what the provider really did, per idempotency key, whatever
// its callers were told: the checker compares it with the ledger.
type effects struct {
	mu      sync.Mutex
	charges map[string]effect // charge key → money taken
	refunds map[string]effect // refund key → money returned
	// conflicts records a key answered with two different references (a
	// second charge under one key).
	conflicts []string
}

type effect struct {
	ref    string
	amount int64
}

// truthProvider sits between the payment policy and the simulator. It
// records every effect the simulator reports and loses some answers after
// the effect happened (the caller is told 503: the outcome is unknown).
type truthProvider struct {
	sim    *paymentsim.Sim
	in     *injector
	f      *Faults
	faults *tally
	fx     *effects
}

var _ payments.Provider = (*truthProvider)(nil)

// Charge implements payments.Provider.
func (p *truthProvider) Charge(ctx context.Context, key string, amount int64, currency string) (string, error) {
	ref, err := p.sim.Charge(ctx, key, amount, currency)
	if err == nil {
		p.fx.mu.Lock()
		if prev, ok := p.fx.charges[key]; ok && prev.ref != ref {
			p.fx.conflicts = append(p.fx.conflicts, key)
		}
		p.fx.charges[key] = effect{ref: ref, amount: amount}
		p.fx.mu.Unlock()
	}
	if p.in.fire(p.faults, "payment_answer_lost", p.f.PaymentLost) {
		return "", apperr.New(apperr.Transient, "chaos: payment answer lost")
	}
	return ref, err
}

// Refund implements payments.Provider.
func (p *truthProvider) Refund(ctx context.Context, key, chargeKey string, amount int64, currency string) (bool, error) {
	refunded, err := p.sim.Refund(ctx, key, chargeKey, amount, currency)
	if err == nil && refunded {
		p.fx.mu.Lock()
		p.fx.refunds[key] = effect{ref: chargeKey, amount: amount}
		p.fx.mu.Unlock()
	}
	if p.in.fire(p.faults, "payment_answer_lost", p.f.PaymentLost) {
		return false, apperr.New(apperr.Transient, "chaos: payment answer lost")
	}
	return refunded, err
}

// newProvider creates the run's one simulated provider on fake time (every
// instance calls it): its latency advances the clock, and a few calls take
// longer than the attempt timeout and fail before any effect. It fails as
// paymentsim.New does.
func (w *world) newProvider() error {
	sim, err := paymentsim.New(paymentsim.Config{DeclineAbove: w.cfg.Payment.DeclineAbove, Seed: w.opts.Seed ^ 0x9e3779b9,
		Sleep: w.providerLatency})
	if err != nil {
		return fmt.Errorf("chaos: payment provider: %w", err)
	}
	w.sim = sim
	w.fx = &effects{charges: map[string]effect{}, refunds: map[string]effect{}}
	return nil
}

// provider is an instance's payment provider: the run's simulator behind
// a policy whose retry pauses advance the clock and whose breaker reads the
// instance's clock now. The policy is the production one otherwise
// (payments.NewGuarded with the instance's configuration), one per instance
// as one per function instance in the cloud.
func (w *world) provider(cfg config.PaymentSettings, now func() time.Time, n uint64) payments.Provider {
	g, err := payments.NewGuarded(payments.GuardedConfig{
		Provider: &truthProvider{sim: w.sim, in: w.in, f: &w.faults, faults: w.faultsN, fx: w.fx},
		Policy: payments.PolicyConfig{
			Name: "payment", MaxConcurrent: cfg.MaxConcurrent, AttemptTimeout: cfg.Timeout,
			Breaker: resilience.BreakerConfig{FailureThreshold: cfg.BreakerThreshold, OpenTimeout: cfg.BreakerOpenFor, Now: now},
			Backoff: resilience.Backoff{Base: 100 * time.Millisecond, Cap: 2 * time.Second, Rand: resilience.NewRand(w.opts.Seed + 3 + 16*n)},
			Sleep: func(ctx context.Context, d time.Duration) error {
				w.clock.Advance(d)
				return ctx.Err()
			},
			OnAttempt: func(ev resilience.AttemptEvent) {
				if ev.Result == resilience.ResultRetry {
					w.retries.add("payment_call_retried", 1)
				}
			},
		}})
	if err != nil {
		// cfg passed config.Validate, which refuses every value NewGuarded
		// refuses: an error here is a bug in the harness.
		panic(err)
	}
	return g
}

// providerLatency is the simulator's Sleep: a call takes a random share of
// twice the configured latency, in fake time; with PaymentTimeout's
// probability it takes longer than the attempt timeout and fails.
func (w *world) providerLatency(ctx context.Context, d time.Duration) error {
	if w.in.fire(w.faultsN, "payment_timeout", w.faults.PaymentTimeout) {
		w.clock.Advance(w.cfg.Payment.Timeout)
		return context.DeadlineExceeded
	}
	w.clock.Advance(time.Duration(2 * w.in.float() * float64(d)))
	return ctx.Err()
}
