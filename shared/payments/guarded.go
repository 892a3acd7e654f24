package payments

import (
	"context"
	"time"

	"ordersaga/shared/resilience"
)

// Guarded wraps a Provider in a resilience.Policy, applied in the one
// permitted order: bulkhead → breaker → retry (full jitter) → per-attempt
// timeout → the provider call. Declines (Rejected) pass through unretried
// and do not count against the breaker. Safe for concurrent use when the
// policy is.
type Guarded struct {
	Provider Provider
	Policy   *resilience.Policy
}

var _ Provider = (*Guarded)(nil)

// NewGuardedProvider returns p wrapped in policy (see Guarded).
func NewGuardedProvider(p Provider, policy *resilience.Policy) *Guarded {
	return &Guarded{Provider: p, Policy: policy}
}

// Charge implements Provider. Errors: those of the wrapped provider (after
// retries), plus Transient resilience.ErrOpen / ErrBulkheadFull, exhaustion
// and attempt timeouts.
func (g *Guarded) Charge(ctx context.Context, key string, amountMinor int64, currency string) (string, error) {
	var ref string
	err := g.Policy.Call(ctx, "payment.charge", func(ctx context.Context) error {
		r, err := g.Provider.Charge(ctx, key, amountMinor, currency)
		ref = r
		return err
	})
	if err != nil {
		return "", err
	}
	return ref, nil
}

// Refund implements Provider; errors as for Charge.
func (g *Guarded) Refund(ctx context.Context, key, chargeKey string, amountMinor int64, currency string) (bool, error) {
	var refunded bool
	err := g.Policy.Call(ctx, "payment.refund", func(ctx context.Context) error {
		r, err := g.Provider.Refund(ctx, key, chargeKey, amountMinor, currency)
		refunded = r
		return err
	})
	return refunded && err == nil, err
}

// PolicyConfig configures NewPolicy. Zero fields take the defaults named.
type PolicyConfig struct {
	// Name labels the bulkhead and breaker (default "payment").
	Name string
	// MaxConcurrent is the bulkhead limit (default 16).
	MaxConcurrent int
	// Breaker configures the circuit breaker (resilience defaults apply).
	Breaker resilience.BreakerConfig
	// MaxAttempts per call, first included (default 3).
	MaxAttempts int
	// Backoff between attempts (default 100 ms doubling to 2 s, full jitter).
	Backoff resilience.Backoff
	// AttemptTimeout bounds each attempt (default 3 s).
	AttemptTimeout time.Duration
	// Sleep waits between attempts (default resilience.SleepContext); tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnAttempt observes every attempt (retries_total metric).
	OnAttempt func(resilience.AttemptEvent)
	// OnReject observes bulkhead rejections.
	OnReject func(name string)
}

// NewPolicy builds the payment provider's policy from cfg.
func NewPolicy(cfg PolicyConfig) *resilience.Policy {
	if cfg.Name == "" {
		cfg.Name = "payment"
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 16
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Backoff.Base <= 0 {
		cfg.Backoff.Base, cfg.Backoff.Cap = 100*time.Millisecond, 2*time.Second
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = 3 * time.Second
	}
	bh := resilience.NewBulkhead(cfg.Name, cfg.MaxConcurrent)
	bh.OnReject = cfg.OnReject
	return &resilience.Policy{
		Bulkhead: bh,
		Breaker:  resilience.NewBreaker(cfg.Name, cfg.Breaker),
		Retry: &resilience.Retry{MaxAttempts: cfg.MaxAttempts, Backoff: cfg.Backoff,
			Sleep: cfg.Sleep, OnAttempt: cfg.OnAttempt},
		AttemptTimeout: cfg.AttemptTimeout,
	}
}
