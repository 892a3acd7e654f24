package config

import (
	"time"

	"ordersaga/shared/domain/dlq"
)

// The defaults of the relay, dead-letter and payment settings: the values
// Default returns, and the single source of the use cases' own defaults
// (relay.DefaultBatchSize is DefaultRelayBatchSize, and so on). A use case
// built with a zero field therefore behaves as one built from Default().
const (
	DefaultRelayBatchSize   = 100                // RELAY_BATCH_SIZE
	DefaultRelayMaxAttempts = 10                 // RELAY_MAX_ATTEMPTS
	DefaultRelayLease       = 30 * time.Second   // RELAY_LEASE
	DefaultRelayBackoffBase = time.Second        // RELAY_BACKOFF_BASE
	DefaultRelayBackoffCap  = 5 * time.Minute    // RELAY_BACKOFF_CAP
	DefaultShards           = 1                  // OUTBOX_SHARDS
	DefaultRelayBudget      = 50 * time.Second   // RELAY_BUDGET
	DefaultOutboxRetention  = 7 * 24 * time.Hour // OUTBOX_RETENTION

	// DefaultRelaySendConcurrency (RELAY_SEND_CONCURRENCY): SendBatch calls
	// of one relay round in flight at once, at most MaxRelaySendConcurrency.
	DefaultRelaySendConcurrency = 4
	MaxRelaySendConcurrency     = 100

	DefaultRedriveMaxPerCall = 1000 // REDRIVE_MAX
	DefaultRedriveMaxRate    = 100  // REDRIVE_MAX_RATE
	// DefaultRedriveLoopLimit (REDRIVE_LOOP_LIMIT) is the loop guard's own
	// default, the one dlq.Record applies.
	DefaultRedriveLoopLimit = dlq.DefaultLoopLimit

	DefaultPaymentTimeout          = 2 * time.Second  // PAYMENT_TIMEOUT (per attempt)
	DefaultPaymentMaxConcurrent    = 16               // PAYMENT_MAX_CONCURRENT
	DefaultPaymentBreakerThreshold = 5                // PAYMENT_BREAKER_THRESHOLD
	DefaultPaymentBreakerOpenFor   = 10 * time.Second // PAYMENT_BREAKER_OPEN_FOR

	// DefaultSagaBatchConcurrency (SAGA_BATCH_CONCURRENCY): sagas of one
	// delivered batch advanced at once. With the trigger's batch of 10 and
	// 8 at once, one instance makes at most 8 payment calls at a time,
	// inside PAYMENT_MAX_CONCURRENT (16). In the scripts/bench burst 8
	// against 4: final-state rate / POST rate 0.72–0.74 against 0.55–0.59,
	// p99 0.31–0.42 s against 0.49–0.57 s.
	DefaultSagaBatchConcurrency = 8
)

// The fast path's settings, which no variable changes: a use case that
// dispatches the outbox rows it just committed (orders, the saga advancer,
// recovery) bounds the dispatch by DefaultDispatchTimeout and leases the
// rows for DefaultDispatchLease, keeping the relay off them meanwhile.
const (
	DefaultDispatchTimeout = 2 * time.Second
	DefaultDispatchLease   = 10 * time.Second
)

// UTCClock is the clock a use case built with now reads: now (time.Now when
// nil) in UTC. Every use case's Now field defaults through it.
func UTCClock(now func() time.Time) func() time.Time {
	if now == nil {
		now = time.Now
	}
	return func() time.Time { return now().UTC() }
}
