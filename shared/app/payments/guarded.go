package payments

import (
	"cmp"
	"context"
	"time"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/validate"
)

// Guarded wraps a Provider in a resilience.Policy, applied in the one
// permitted order: bulkhead → breaker → retry (full jitter) → per-attempt
// timeout → the provider call. Declines (Rejected) pass through unretried
// and do not count against the breaker. Built by NewGuarded; safe for
// concurrent use.
type Guarded struct {
	Provider Provider
	// Policy is the policy NewGuarded built (its Breaker's state is readable).
	Policy *resilience.Policy
}

var _ Provider = (*Guarded)(nil)

// GuardedConfig configures NewGuarded.
type GuardedConfig struct {
	Provider Provider     // required
	Policy   PolicyConfig // zero fields take the defaults PolicyConfig names
}

// NewGuarded returns cfg.Provider behind the policy built from cfg.Policy.
// It fails (apperr.Invalid, naming the fields) without a provider or on a
// negative setting.
func NewGuarded(cfg GuardedConfig) (*Guarded, error) {
	var p validate.Problems
	p.Require(cfg.Provider != nil, "Provider")
	if err := p.Err("payments.NewGuarded"); err != nil {
		return nil, err
	}
	policy, err := newPolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	return &Guarded{Provider: cfg.Provider, Policy: policy}, nil
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

// PolicyConfig configures the policy of NewGuarded. Zero fields take the
// defaults named; negative ones are refused.
type PolicyConfig struct {
	// Name labels the bulkhead and breaker (default DefaultName).
	Name string
	// MaxConcurrent is the bulkhead limit (default DefaultMaxConcurrent).
	MaxConcurrent int
	// Breaker configures the circuit breaker: a zero FailureThreshold or
	// OpenTimeout takes DefaultBreakerThreshold or DefaultBreakerOpenFor,
	// the other fields the resilience defaults; its Name is Name.
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

// Validate reports a negative MaxConcurrent, MaxAttempts, AttemptTimeout,
// Backoff.Base or Backoff.Cap, and what resilience.BreakerConfig.Validate
// refuses. Errors are apperr.Invalid and name the fields.
func (c PolicyConfig) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "MaxConcurrent", c.MaxConcurrent)
	validate.NotNegative(&p, "MaxAttempts", c.MaxAttempts)
	validate.NotNegative(&p, "AttemptTimeout", c.AttemptTimeout)
	validate.NotNegative(&p, "Backoff.Base", c.Backoff.Base)
	validate.NotNegative(&p, "Backoff.Cap", c.Backoff.Cap)
	validate.NotNegative(&p, "Breaker.FailureThreshold", c.Breaker.FailureThreshold)
	validate.NotNegative(&p, "Breaker.OpenTimeout", c.Breaker.OpenTimeout)
	validate.NotNegative(&p, "Breaker.SuccessesToClose", c.Breaker.SuccessesToClose)
	return p.Err("payments.PolicyConfig")
}

// setDefaults gives each zero field of c its documented default.
func (c *PolicyConfig) setDefaults() {
	c.Name = cmp.Or(c.Name, DefaultName)
	c.MaxConcurrent = cmp.Or(c.MaxConcurrent, DefaultMaxConcurrent)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	if c.Backoff.Base == 0 {
		c.Backoff.Base, c.Backoff.Cap = DefaultBackoffBase, DefaultBackoffCap
	}
	c.AttemptTimeout = cmp.Or(c.AttemptTimeout, DefaultAttemptTimeout)
	c.Breaker.FailureThreshold = cmp.Or(c.Breaker.FailureThreshold, DefaultBreakerThreshold)
	c.Breaker.OpenTimeout = cmp.Or(c.Breaker.OpenTimeout, DefaultBreakerOpenFor)
	c.Breaker.Name = c.Name
}

// newPolicy builds the payment provider's policy from cfg.
func newPolicy(cfg PolicyConfig) (*resilience.Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	bh, err := resilience.NewBulkhead(resilience.BulkheadConfig{Name: cfg.Name, Limit: cfg.MaxConcurrent, OnReject: cfg.OnReject})
	if err != nil {
		return nil, err
	}
	br, err := resilience.NewBreaker(cfg.Breaker)
	if err != nil {
		return nil, err
	}
	return &resilience.Policy{
		Bulkhead: bh,
		Breaker:  br,
		Retry: &resilience.Retry{MaxAttempts: cfg.MaxAttempts, Backoff: cfg.Backoff,
			Sleep: cfg.Sleep, OnAttempt: cfg.OnAttempt},
		AttemptTimeout: cfg.AttemptTimeout,
	}, nil
}
