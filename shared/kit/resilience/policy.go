package resilience

import (
	"context"
	"errors"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/validate"
)

// Policy composes the protections around one call to a dependency, always in
// this order, outermost first:
//
//	bulkhead → breaker → retry (full jitter) → per-attempt timeout → fn
//
// so a rejected call never consumes breaker or retry budget, the breaker sees
// one outcome per Call (the retry loop's final result, however many attempts
// it took), and each attempt gets its own deadline. Retry never sits outside
// the breaker: retrying ErrOpen would hammer a dependency the breaker is
// protecting, and counting every attempt would open it too early.
//
// Any nil (or zero) component is skipped. A Policy is safe for concurrent use
// when its components are; share one per dependency.
type Policy struct {
	// Bulkhead limits concurrency; nil means unlimited.
	Bulkhead *Bulkhead
	// Breaker fails fast while the dependency is down; nil means none.
	Breaker *Breaker
	// Retry re-runs failed attempts; nil means a single attempt.
	Retry *Retry
	// AttemptTimeout bounds each attempt with context.WithTimeout; zero means
	// none, a negative one is refused (Validate).
	AttemptTimeout time.Duration
	// Fallback, if set, is called with the final error and its result returned instead.
	Fallback func(ctx context.Context, err error) error
}

// Call runs fn under the policy and returns nil, fn's error (possibly wrapped
// by the retry loop), a Transient ErrBulkheadFull / ErrOpen / attempt-timeout
// error, or whatever Fallback returns for any of these. fn must honour its
// ctx: the attempt timeout cancels the context, it does not abandon fn.
//
// A Policy that Validate refuses returns that error (Invalid) without
// calling fn.
func (p *Policy) Call(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	if p.AttemptTimeout < 0 {
		return p.Validate()
	}
	call := fn
	if p.AttemptTimeout > 0 {
		call = withAttemptTimeout(op, p.AttemptTimeout, fn)
	}
	if p.Retry != nil {
		inner := call
		call = func(ctx context.Context) error { return p.Retry.Do(ctx, op, inner) }
	}
	if p.Breaker != nil {
		inner := call
		call = func(ctx context.Context) error { return p.Breaker.Execute(ctx, inner) }
	}
	if p.Bulkhead != nil {
		inner := call
		call = func(ctx context.Context) error { return p.Bulkhead.Execute(ctx, inner) }
	}
	err := call(ctx)
	if err != nil && p.Fallback != nil {
		return p.Fallback(ctx, err)
	}
	return err
}

// Validate reports a negative AttemptTimeout and what Retry.Validate
// refuses. Errors are apperr.Invalid and name the fields.
func (p *Policy) Validate() error {
	var probs validate.Problems
	validate.NotNegative(&probs, "AttemptTimeout", p.AttemptTimeout)
	if err := probs.Err("resilience.Policy"); err != nil {
		return err
	}
	if p.Retry != nil {
		return p.Retry.Validate()
	}
	return nil
}

// withAttemptTimeout runs each attempt under its own deadline. When that
// deadline (not the caller's) expired, the failure is reported as Transient
// so the retry loop tries again — unless fn already classified it otherwise.
func withAttemptTimeout(op string, d time.Duration, fn func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		err := fn(actx)
		if err == nil || ctx.Err() != nil || !errors.Is(actx.Err(), context.DeadlineExceeded) {
			return err
		}
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Kind != apperr.Transient {
			return err
		}
		return apperr.Wrap(apperr.Transient, err, "%s: attempt timed out after %s", op, d)
	}
}
