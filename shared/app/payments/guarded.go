package payments

import (
	"cmp"
	"context"
	"time"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
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
// retries; wrapped in a resilience.DownError, errors.Is ErrDown, when the
// breaker is open after the failure), plus Transient resilience.ErrOpen /
// ErrBulkheadFull, exhaustion and attempt timeouts.
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

// Defaults of a PolicyConfig's zero fields. Those with a variable are
// config.Default()'s values.
const (
	DefaultName             = "payment"
	DefaultMaxConcurrent    = config.DefaultPaymentMaxConcurrent    // PAYMENT_MAX_CONCURRENT
	DefaultAttemptTimeout   = config.DefaultPaymentTimeout          // PAYMENT_TIMEOUT
	DefaultBreakerThreshold = config.DefaultPaymentBreakerThreshold // PAYMENT_BREAKER_THRESHOLD
	DefaultBreakerOpenFor   = config.DefaultPaymentBreakerOpenFor   // PAYMENT_BREAKER_OPEN_FOR
	DefaultMaxAttempts      = 3
	DefaultBackoffBase      = 100 * time.Millisecond
	DefaultBackoffCap       = 2 * time.Second
)

// PolicyConfig configures NewPolicy. Zero fields take the defaults named.
type PolicyConfig struct {
	// Name labels the bulkhead and breaker (default DefaultName).
	Name string
	// MaxConcurrent is the bulkhead limit (default DefaultMaxConcurrent).
	MaxConcurrent int
	// Breaker configures the circuit breaker: a zero FailureThreshold or
	// OpenTimeout takes DefaultBreakerThreshold or DefaultBreakerOpenFor,
	// the other fields the resilience defaults.
	Breaker resilience.BreakerConfig
	// MaxAttempts per call, first included (default DefaultMaxAttempts).
	MaxAttempts int
	// Backoff between attempts (a zero Base takes DefaultBackoffBase and
	// DefaultBackoffCap; full jitter).
	Backoff resilience.Backoff
	// AttemptTimeout bounds each attempt (default DefaultAttemptTimeout).
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
	cfg.Name = cmp.Or(cfg.Name, DefaultName)
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Backoff.Base <= 0 {
		cfg.Backoff.Base, cfg.Backoff.Cap = DefaultBackoffBase, DefaultBackoffCap
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.Breaker.FailureThreshold <= 0 {
		cfg.Breaker.FailureThreshold = DefaultBreakerThreshold
	}
	if cfg.Breaker.OpenTimeout <= 0 {
		cfg.Breaker.OpenTimeout = DefaultBreakerOpenFor
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
