package resilience

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/validate"
)

// Defaults used when the corresponding Retry field is zero.
const (
	// DefaultMaxAttempts is the attempt budget when Retry.MaxAttempts is zero.
	DefaultMaxAttempts = 3
	// DefaultMaxDelay bounds any single wait when Retry.MaxDelay is zero.
	DefaultMaxDelay = 30 * time.Second
)

// Result is the outcome label of an attempt, used as the "result" label of
// retries_total{operation,result}.
type Result string

// The results. Exactly one final result is reported per Do call; ResultRetry
// marks intermediate attempts.
const (
	// ResultSuccess: the first attempt succeeded.
	ResultSuccess Result = "success"
	// ResultSuccessAfterRetry: a later attempt succeeded.
	ResultSuccessAfterRetry Result = "success_after_retry"
	// ResultPermanent: an attempt failed with a non-retryable error.
	ResultPermanent Result = "permanent"
	// ResultExhausted: every attempt failed with retryable errors.
	ResultExhausted Result = "exhausted"
	// ResultCanceled: the caller's context ended before the call could finish.
	ResultCanceled Result = "canceled"
	// ResultRetry: the attempt failed retryably and another will follow (not final).
	ResultRetry Result = "retry"
)

// AttemptEvent describes one finished attempt of [Retry.Do].
type AttemptEvent struct {
	// Op is the operation name passed to Do.
	Op string
	// Attempt is the 1-based number of the attempt that just finished
	// (0 if the context ended before the first attempt).
	Attempt int
	// Err is the attempt's error (nil on success).
	Err error
	// Result is ResultRetry for intermediate attempts, otherwise the final outcome.
	Result Result
	// Delay is the wait before the next attempt (ResultRetry only).
	Delay time.Duration
}

// Final reports whether this event carries the call's final outcome; count
// final events for retries_total{operation,result}.
func (e AttemptEvent) Final() bool { return e.Result != ResultRetry }

// Retry runs an operation up to MaxAttempts times, waiting a full-jitter
// [Backoff] (or a longer server hint) between attempts. Its zero value is
// ready to use: zero fields take the defaults documented on each, and a
// negative one is refused (Validate; Do returns that error without calling
// fn). A Retry is safe for concurrent use when its
// hooks and Backoff.Rand are; do not mutate it while in use.
//
// In a [Policy] a Retry always sits inside the breaker, never around it.
type Retry struct {
	// MaxAttempts is the total number of attempts (first try included;
	// default DefaultMaxAttempts).
	MaxAttempts int
	// Backoff computes the jittered wait before retry n (n = 0 after the first failure).
	Backoff Backoff
	// MaxDelay bounds every wait, including server hints (default DefaultMaxDelay).
	MaxDelay time.Duration
	// Retryable decides whether an error may be retried; nil means DefaultRetryable.
	Retryable func(error) bool
	// Sleep waits d or until ctx ends (returning ctx's error); nil means SleepContext.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnAttempt, if set, is called synchronously after every attempt (metrics hook).
	OnAttempt func(AttemptEvent)
}

// SleepContext waits for d on a real timer, returning early with ctx.Err()
// if ctx ends first. d <= 0 returns ctx.Err() immediately.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// oneAttemptKey marks a context whose Retry.Do calls make one attempt.
type oneAttemptKey struct{}

// OneAttempt returns ctx marked so that every Retry.Do under it makes a
// single attempt, whatever its MaxAttempts: for a caller that already
// spaces its own tries widely (a saga step waiting for a dependency that
// seems down asks once per wait), so quick retries would only multiply the
// calls to a dependency that is down.
func OneAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneAttemptKey{}, true)
}

func oneAttempt(ctx context.Context) bool {
	one, _ := ctx.Value(oneAttemptKey{}).(bool)
	return one
}

// Do calls fn until it succeeds, fails with a non-retryable error, the attempt
// budget is spent (one attempt under a ctx from [OneAttempt]), or ctx ends.
// It returns:
//   - nil on success;
//   - the non-retryable error unchanged (result "permanent");
//   - after exhaustion, a Transient error naming op and the number of attempts
//     and wrapping the last error (errors.Is/As on it still work);
//   - when ctx ends, a Transient error wrapping both the last error (if any)
//     and ctx.Err(); fn is not called again.
//
// A Retry that Validate refuses returns that error (Invalid) and never
// calls fn. Do is idempotent only as far as fn is: it calls fn again after
// failures.
func (r *Retry) Do(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	if err := r.Validate(); err != nil {
		return err
	}
	maxAttempts := cmp.Or(r.MaxAttempts, DefaultMaxAttempts)
	if oneAttempt(ctx) {
		maxAttempts = 1
	}
	retryable := r.Retryable
	if retryable == nil {
		retryable = DefaultRetryable
	}
	sleep := r.Sleep
	if sleep == nil {
		sleep = SleepContext
	}

	var last error
	for attempt := 1; ; attempt++ {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return r.stopped(op, attempt-1, last, ctxErr)
		}
		err := fn(ctx)
		if err == nil {
			res := ResultSuccess
			if attempt > 1 {
				res = ResultSuccessAfterRetry
			}
			r.report(AttemptEvent{Op: op, Attempt: attempt, Result: res})
			return nil
		}
		last = err
		canRetry := retryable(err)
		// The caller's context ended: report that rather than judging an error
		// the cancellation itself most likely caused.
		if ctxErr := ctx.Err(); ctxErr != nil && (canRetry || errors.Is(err, ctxErr)) {
			return r.stopped(op, attempt, err, ctxErr)
		}
		if !canRetry {
			r.report(AttemptEvent{Op: op, Attempt: attempt, Err: err, Result: ResultPermanent})
			return err
		}
		if attempt >= maxAttempts {
			r.report(AttemptEvent{Op: op, Attempt: attempt, Err: err, Result: ResultExhausted})
			return apperr.Wrap(apperr.Transient, err, "%s: gave up after %s", op, attemptsText(attempt))
		}
		delay := r.delay(attempt-1, err)
		r.report(AttemptEvent{Op: op, Attempt: attempt, Err: err, Result: ResultRetry, Delay: delay})
		if serr := sleep(ctx, delay); serr != nil {
			return r.stopped(op, attempt, err, serr)
		}
	}
}

// delay is max(server hint, jittered backoff for retry n), capped at MaxDelay.
func (r *Retry) delay(n int, err error) time.Duration {
	d := r.Backoff.Delay(n)
	var h RetryAfterer
	if errors.As(err, &h) {
		d = max(d, h.RetryAfter())
	}
	return min(d, cmp.Or(r.MaxDelay, DefaultMaxDelay))
}

// Validate reports a negative MaxAttempts, MaxDelay, Backoff.Base or
// Backoff.Cap (zero means the default). Errors are apperr.Invalid and name
// the fields.
func (r *Retry) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "MaxAttempts", r.MaxAttempts)
	validate.NotNegative(&p, "MaxDelay", r.MaxDelay)
	validate.NotNegative(&p, "Backoff.Base", r.Backoff.Base)
	validate.NotNegative(&p, "Backoff.Cap", r.Backoff.Cap)
	return p.Err("resilience.Retry")
}

// stopped reports and builds the error for a call cut short by its context.
func (r *Retry) stopped(op string, n int, last, ctxErr error) error {
	r.report(AttemptEvent{Op: op, Attempt: n, Err: last, Result: ResultCanceled})
	cause := ctxErr
	if last != nil && !errors.Is(last, ctxErr) {
		cause = fmt.Errorf("%w (%w)", last, ctxErr)
	} else if last != nil {
		cause = last
	}
	return apperr.Wrap(apperr.Transient, cause, "%s: stopped after %s", op, attemptsText(n))
}

func (r *Retry) report(ev AttemptEvent) {
	if r.OnAttempt != nil {
		r.OnAttempt(ev)
	}
}

// attemptsText renders "1 attempt" / "3 attempts".
func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}
