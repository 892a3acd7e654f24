package metrics

// Metric names. Every one has a Def in Catalog.
const (
	// SagaSteps counts step and compensation executions
	// {step, direction: forward|compensate, status: succeeded|retry|failed|gave_up|skipped}.
	SagaSteps = "saga_steps_total"
	// SagaDuration observes a saga's start-to-final-state time
	// {saga_type, outcome: completed|compensated|failed}.
	SagaDuration = "saga_duration_seconds"
	// Compensations counts compensation executions {step, status} (statuses as SagaSteps).
	Compensations = "compensations_total"
	// OutboxLag is the age in seconds of the oldest pending outbox row (0 when none).
	OutboxLag = "outbox_lag_seconds"
	// OutboxPending is the number of pending outbox rows.
	OutboxPending = "outbox_pending"
	// OutboxPublished counts outbox rows published {destination}.
	OutboxPublished = "outbox_published_total"
	// OutboxFailed counts failed publish attempts of outbox rows {destination}.
	OutboxFailed = "outbox_failed_total"
	// DLQSize is the number of entries in a dead-letter store or YMQ dead-letter queue {queue}.
	DLQSize = "dlq_size"
	// DLQAdditions counts entries added to a dead-letter store {queue, error_type}.
	DLQAdditions = "dlq_additions_total"
	// Retries counts retried operations by final result {operation, result}.
	Retries = "retries_total"
	// IdempotencyRequests counts idempotent requests {outcome: new|replayed|conflict|mismatch}.
	IdempotencyRequests = "idempotency_requests_total"
	// HTTPRequests counts HTTP requests {route (pattern, not path), status (code)}.
	HTTPRequests = "http_requests_total"
	// HTTPRequestDuration observes HTTP handling time {route}.
	HTTPRequestDuration = "http_request_duration_seconds"
	// QueueSends counts messages sent {queue, result: ok|error}.
	QueueSends = "queue_sends_total"
	// QueueReceives counts messages received {queue}.
	QueueReceives = "queue_receives_total"
	// BreakerState is a circuit breaker's state {dependency}: see BreakerClosed, BreakerHalfOpen, BreakerOpen.
	BreakerState = "breaker_state"
	// BreakerTransitions counts circuit breaker transitions {dependency, from, to} (state names).
	BreakerTransitions = "breaker_transitions_total"
	// BulkheadRejections counts calls refused by a full bulkhead {dependency}.
	BulkheadRejections = "bulkhead_rejections_total"
	// RedriveActions counts dead-letter redrive actions {action, outcome}.
	RedriveActions = "redrive_actions_total"
	// SagaMessages counts saga command messages by what the advancer did
	// {result: processed|stale|busy|unknown|finished|duplicate|error|...}.
	SagaMessages = "saga_messages_total"
	// RecoveryResent counts stuck sagas re-enqueued by the recovery job.
	RecoveryResent = "recovery_resent_total"
	// Reconciled counts orders whose diverged status the reconciler repaired.
	Reconciled = "reconciled_total"
	// MetricsUnknown counts Recorder calls with a name not in the Catalog.
	MetricsUnknown = "ordersaga_metrics_unknown_total"
	// MetricsDropped counts Recorder calls or points dropped {reason: see the Drop* constants}.
	MetricsDropped = "ordersaga_metrics_dropped_total"
)

// Values of BreakerState.
const (
	BreakerClosed   = 0.0
	BreakerHalfOpen = 1.0
	BreakerOpen     = 2.0
)

// Values of the IdempotencyRequests outcome label.
const (
	IdempotencyNew      = "new"
	IdempotencyReplayed = "replayed"
	IdempotencyConflict = "conflict" // same key still in flight
	IdempotencyMismatch = "mismatch" // same key, different request fingerprint
)

// Reasons of MetricsDropped.
const (
	DropOddLabels    = "odd_labels"    // odd number of label arguments
	DropUnknownLabel = "unknown_label" // key not declared in Def.Labels
	DropLabelValue   = "label_value"   // value the backend refuses (e.g. invalid UTF-8)
	DropInvalidValue = "invalid_value" // NaN, ±Inf, or a negative counter increment
	DropKind         = "kind"          // method does not fit the metric's Kind
	DropOverflow     = "overflow"      // push buffer full (ycmetrics)
	DropFlushFailed  = "flush_failed"  // points lost because a push failed (ycmetrics)
)

// Bucket layouts.
var (
	// SagaBuckets (seconds) put a boundary at 300 s, the saga-duration alert threshold.
	SagaBuckets = []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800}
	// HTTPBuckets (seconds) for request handling.
	HTTPBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Catalog is every metric of the product. Adapters register exactly these;
// ops/prometheus/alerts.yml may reference only these (a test checks it).
var Catalog = []Def{
	{Name: SagaSteps, Kind: Counter, Labels: []string{"step", "direction", "status"},
		Help: "Saga step and compensation executions by outcome."},
	{Name: SagaDuration, Kind: Histogram, Labels: []string{"saga_type", "outcome"}, Buckets: SagaBuckets,
		Help: "Time from saga start to its final state, in seconds."},
	{Name: Compensations, Kind: Counter, Labels: []string{"step", "status"},
		Help: "Compensation executions by outcome."},
	{Name: OutboxLag, Kind: Gauge,
		Help: "Age of the oldest pending outbox row, in seconds (0 when none)."},
	{Name: OutboxPending, Kind: Gauge,
		Help: "Number of pending outbox rows."},
	{Name: OutboxPublished, Kind: Counter, Labels: []string{"destination"},
		Help: "Outbox rows published."},
	{Name: OutboxFailed, Kind: Counter, Labels: []string{"destination"},
		Help: "Failed publish attempts of outbox rows."},
	{Name: DLQSize, Kind: Gauge, Labels: []string{"queue"},
		Help: "Entries in a dead-letter store or dead-letter queue."},
	{Name: DLQAdditions, Kind: Counter, Labels: []string{"queue", "error_type"},
		Help: "Entries added to a dead-letter store."},
	{Name: Retries, Kind: Counter, Labels: []string{"operation", "result"},
		Help: "Retried operations by final result."},
	{Name: IdempotencyRequests, Kind: Counter, Labels: []string{"outcome"},
		Help: "Requests carrying an idempotency key, by outcome."},
	{Name: HTTPRequests, Kind: Counter, Labels: []string{"route", "status"},
		Help: "HTTP requests by route pattern and status code."},
	{Name: HTTPRequestDuration, Kind: Histogram, Labels: []string{"route"}, Buckets: HTTPBuckets,
		Help: "HTTP request handling time, in seconds."},
	{Name: QueueSends, Kind: Counter, Labels: []string{"queue", "result"},
		Help: "Messages sent to a queue, by result."},
	{Name: QueueReceives, Kind: Counter, Labels: []string{"queue"},
		Help: "Messages received from a queue."},
	{Name: BreakerState, Kind: Gauge, Labels: []string{"dependency"},
		Help: "Circuit breaker state: 0 closed, 1 half-open, 2 open."},
	{Name: BreakerTransitions, Kind: Counter, Labels: []string{"dependency", "from", "to"},
		Help: "Circuit breaker state transitions."},
	{Name: BulkheadRejections, Kind: Counter, Labels: []string{"dependency"},
		Help: "Calls rejected by a full bulkhead."},
	{Name: RedriveActions, Kind: Counter, Labels: []string{"action", "outcome"},
		Help: "Dead-letter redrive actions by outcome."},
	{Name: SagaMessages, Kind: Counter, Labels: []string{"result"},
		Help: "Saga command messages by what the advancer did with them."},
	{Name: RecoveryResent, Kind: Counter,
		Help: "Stuck sagas re-enqueued by recovery."},
	{Name: Reconciled, Kind: Counter,
		Help: "Orders whose diverged status was repaired by reconciliation."},
	{Name: MetricsUnknown, Kind: Counter,
		Help: "Metric calls with a name missing from the catalogue (a bug)."},
	{Name: MetricsDropped, Kind: Counter, Labels: []string{"reason"},
		Help: "Metric calls or points dropped, by reason."},
}

var index = buildIndex(Catalog)

func buildIndex(defs []Def) map[string]*Def {
	m := make(map[string]*Def, len(defs))
	for i := range defs {
		m[defs[i].Name] = &defs[i]
	}
	return m
}

// Lookup returns the catalogued Def named name. The returned Def is shared:
// do not modify it. Safe for concurrent use.
func Lookup(name string) (*Def, bool) {
	d, ok := index[name]
	return d, ok
}
