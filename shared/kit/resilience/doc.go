// Package resilience holds ordersaga's call-protection building blocks for
// outbound dependencies (YDB, YMQ, participant HTTP services):
//
//   - [Backoff]: capped exponential backoff with full jitter,
//     delay(n) = uniform[0, min(Cap, Base·2^n)).
//   - [Retry]: a context-aware retry loop with a retryable predicate
//     ([DefaultRetryable]), server Retry-After hints ([RetryAfterer]) and a
//     per-call outcome hook for the retries_total{operation,result} metric.
//   - [Breaker]: a Closed → Open → Half-Open circuit breaker with exactly
//     one probe in flight while Half-Open.
//   - [Bulkhead]: a per-dependency concurrency limit that fails fast.
//   - [Policy]: the composition, in the one permitted order
//     bulkhead → breaker → retry → per-attempt timeout, plus a fallback.
//
// Time and randomness are injectable (Breaker Now, Retry Sleep, Backoff Rand)
// so tests run without sleeping. Nothing here starts goroutines. Errors
// produced here are apperr kinds: ErrOpen, ErrBulkheadFull, retry exhaustion
// and attempt timeouts are all Transient.
package resilience
