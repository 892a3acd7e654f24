package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/saga"
)

// The bounds the documentation states (docs/capacity.md, "Retry
// amplification"); TestRetryBoundsHoldWithTheDeployedConfiguration fails when
// the computed worst case exceeds them, and TestDocsStateTheCheckedBounds
// when the page states other numbers.
const (
	PromisedPaymentCallsPerOrder = 90
	PromisedSagaEndWithin        = 60 * time.Minute
)

// retryLayers is every layer that retries on the way from one order to a
// dependency, read from the code's defaults and the deployment.
type retryLayers struct {
	// Payment provider: attempts of one guarded call (resilience.Retry inside
	// the breaker), the per-attempt timeout and the retry backoff.
	PaymentCallAttempts int
	PaymentTimeout      time.Duration
	PaymentBackoffCap   time.Duration
	BreakerOpenFor      time.Duration
	// Saga: the step table (attempts, compensation attempts, timeouts), the
	// step backoff and how long a step may wait for a dependency that is
	// down without spending attempts (the outage bound).
	Steps           saga.Table
	SagaBackoffBase time.Duration
	SagaBackoffCap  time.Duration
	OutageBound     time.Duration
	ChainBudget     time.Duration
	// Recovery: resends of a saga that does not move before it is failed,
	// how long it must be due first, and the timer period.
	MaxResends     int
	StuckAfter     time.Duration
	RecoveryPeriod time.Duration
	// Relay: publish attempts of one outbox row.
	RelayMaxAttempts int
	// SDKs: closure runs of one YDB transaction; attempts of one Message
	// Queue call (aws-sdk-go-v2 standard retryer).
	YDBTxAttempts  int
	MQCallAttempts int
	// Queue trigger and queue: receives before the dead-letter queue, batch,
	// cutoff, sagas of a batch at once, the advancer's execution timeout.
	MaxReceiveCount  int
	BatchSize        int
	BatchCutoff      time.Duration
	BatchConcurrency int
	AdvancerTimeout  time.Duration
}

// layersFrom collects the layers: code defaults where no setting exists,
// the loaded configuration where one does.
func layersFrom(d deployment) (retryLayers, error) {
	l := retryLayers{
		PaymentCallAttempts: payments.DefaultMaxAttempts,
		PaymentTimeout:      d.Cfg.Payment.Timeout,
		PaymentBackoffCap:   payments.DefaultBackoffCap,
		BreakerOpenFor:      d.Cfg.Payment.BreakerOpenFor,
		Steps:               orchestrator.CreateOrderSaga.Table(),
		SagaBackoffBase:     d.Cfg.Saga.BackoffBase,
		SagaBackoffCap:      d.Cfg.Saga.BackoffCap,
		OutageBound:         d.Cfg.Saga.OutageBound,
		ChainBudget:         orchestrator.DefaultChainBudget,
		MaxResends:          d.Cfg.Recovery.MaxResends,
		StuckAfter:          d.Cfg.Recovery.StuckAfter,
		RecoveryPeriod:      time.Minute, // the cron of every timer is at most once a minute (checked below)
		RelayMaxAttempts:    d.Cfg.Relay.MaxAttempts,
		YDBTxAttempts:       ydbstore.DefaultMaxAttempts,
		MQCallAttempts:      awsretry.DefaultMaxAttempts,
		BatchConcurrency:    d.Cfg.Saga.BatchConcurrency,
		AdvancerTimeout:     d.FunctionTimeout["sagaadvancer"],
	}
	queueName := ""
	for _, qt := range d.Triggers.QueueTriggers {
		if qt.Function == "sagaadvancer" {
			l.BatchSize, l.BatchCutoff = qt.BatchSize, time.Duration(qt.BatchCutoffSeconds)*time.Second
			queueName = qt.Queue
		}
	}
	if queueName == "" {
		return l, fmt.Errorf("triggers.yaml: no queue trigger for sagaadvancer")
	}
	for _, q := range d.Triggers.Queues {
		if q.Name == queueName {
			l.MaxReceiveCount = q.MaxReceiveCount
		}
	}
	if l.MaxReceiveCount <= 0 {
		return l, fmt.Errorf("triggers.yaml: queue %s has no max_receive_count: a failing message would be received forever", queueName)
	}
	for _, t := range d.Triggers.Timers {
		if t.Function == "sagarecovery" && t.Cron != "* * * * ? *" {
			return l, fmt.Errorf("triggers.yaml: the model assumes sagarecovery runs every minute, its cron is %q", t.Cron)
		}
	}
	return l, nil
}

// paymentSteps are the steps whose action calls the payment provider once
// per attempt (through the guarded provider).
var paymentSteps = map[string]bool{saga.StepProcessPayment: true, saga.StepRefundPayment: true}

// step returns the table row of the forward step named name.
func (l retryLayers) step(name string) saga.StepDef {
	for _, s := range l.Steps {
		if s.Name == name {
			return s
		}
	}
	return saga.StepDef{}
}

// compensationOf returns the table row whose compensation is name.
func (l retryLayers) compensationOf(name string) saga.StepDef {
	for _, s := range l.Steps {
		if s.Compensation == name {
			return s
		}
	}
	return saga.StepDef{}
}

// bound is one row of the retry-amplification table.
type bound struct {
	Dependency string
	Scenario   string
	Calls      int           // worst-case calls per order
	Duration   time.Duration // worst-case time before the order ends (0: not bounded by this dependency)
	Product    string        // how the number is made
	Limit      int           // the documented bound on Calls (0: none)
	LimitTime  time.Duration // the documented bound on Duration (0: none)
}

// ceilSecond rounds d up to a whole second, as the relay sends queue delays.
func ceilSecond(d time.Duration) time.Duration {
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

// backoffCeiling is the largest full-jitter delay before retry n (n = 0 after
// the first failure): min(cap, base·2^n).
func backoffCeiling(base, cap time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < cap; i++ {
		d *= 2
	}
	return min(d, cap)
}

// holds is how many times a step whose participant keeps failing holds
// its last attempt (orchestrator: a transient failure that would spend the
// last attempt waits instead, for the outage bound from the first wait):
// the held runs come at least a hold apart — the backoff's cap, rounded up
// to a whole second, at least one — and a run holds while less than the
// bound has passed since the first, so ⌈bound / hold⌉ of them.
func (l retryLayers) holds(def saga.StepDef) int {
	ceiling, outage := cmp.Or(def.BackoffCap, l.SagaBackoffCap), cmp.Or(def.OutageBound, l.OutageBound)
	hold := max(ceilSecond(ceiling), time.Second)
	return int((outage + hold - 1) / hold)
}

// stepCalls is how many payment-provider calls a step (or compensation)
// with attempts attempts makes while the provider fails every call through
// a closed breaker: each of its attempts a guarded call of
// PaymentCallAttempts (the last one the run that began the first hold),
// and each run after a wait a single call (the orchestrator marks its
// context resilience.OneAttempt): the holds after the first and the final
// run after the bound, as many as the holds.
func (l retryLayers) stepCalls(def saga.StepDef, attempts int) int {
	return l.PaymentCallAttempts*attempts + l.holds(def)
}

// stepWorstTime is the longest a step (or compensation) with attempts
// attempts that calls a participant can take while the participant fails:
// the outage bound of its waits (the breaker's, or the holds of its last
// attempt) plus the last wait begun just before the bound ends (the longer
// of the breaker's open period and the backoff's cap, plus the first
// backoff step, rounded up to a second); the runs outside the bound — its
// attempts and the run that began the first wait — each to the step
// timeout, with one trigger batch cutoff per message (the cutoffs of the
// waits fall inside the bound); and the backoffs between its attempts, each
// at its ceiling rounded up to a second. A step whose row sets its own
// backoff or outage bound (its RetryPolicy) is bounded by those. A
// provider's Retry-After hint longer than these delays lengthens them, as
// it does any retry; the bound assumes none.
func (l retryLayers) stepWorstTime(def saga.StepDef, attempts int) time.Duration {
	base, ceiling, outage := cmp.Or(def.BackoffBase, l.SagaBackoffBase), cmp.Or(def.BackoffCap, l.SagaBackoffCap), cmp.Or(def.OutageBound, l.OutageBound)
	t := outage + ceilSecond(max(l.BreakerOpenFor, ceiling)+base)
	t += time.Duration(attempts+1) * (def.Timeout + l.BatchCutoff)
	for n := 0; n < attempts-1; n++ {
		t += ceilSecond(backoffCeiling(base, ceiling, n))
	}
	return t
}

// bounds computes the table. Scenario "down": the dependency answers every
// call with an error or a timeout while everything else works, so each
// failure is recorded and the saga moves on; this is what the documented
// bounds promise. Scenario "down + crashes": additionally every invocation
// dies after its calls and before it records them, so the queue redelivers
// (up to maxReceiveCount) and recovery resends (up to MaxResends) the same
// attempt; it shows what each outer layer would multiply.
func (l retryLayers) bounds() []bound {
	charge := l.step(saga.StepProcessPayment)
	refund := l.compensationOf(saga.StepRefundPayment)
	payCalls := l.stepCalls(charge, charge.MaxAttempts) + l.stepCalls(refund, refund.MaxCompensationAttempts)
	payTime := l.stepWorstTime(charge, charge.MaxAttempts) + l.stepWorstTime(refund, refund.MaxCompensationAttempts)
	// The steps before the payment run once forward and once compensating
	// (create/cancel, reserve/release); count one timeout and one cutoff
	// each way.
	for _, s := range l.Steps {
		if paymentSteps[s.Name] {
			break
		}
		payTime += 2 * (s.Timeout + l.BatchCutoff)
	}
	deliveries := l.MaxReceiveCount * (1 + l.MaxResends)
	out := []bound{
		{Dependency: "payment provider", Scenario: "down",
			Calls: payCalls, Duration: payTime, Limit: PromisedPaymentCallsPerOrder, LimitTime: PromisedSagaEndWithin,
			Product: fmt.Sprintf("%d call attempts × (%d charge step attempts + %d refund attempts) + %d + %d single calls after the steps' first waits, the breaker kept closed (each step holds its last attempt for %s, one run per backoff cap); with it open, a step waits up to %s spending no attempt, and the provider sees one probe per open period in all",
				l.PaymentCallAttempts, charge.MaxAttempts, refund.MaxCompensationAttempts, l.holds(charge), l.holds(refund), l.OutageBound, l.OutageBound)},
		{Dependency: "payment provider", Scenario: "down + crashes",
			Calls: payCalls * deliveries,
			Product: fmt.Sprintf("the above × %d receives × (1 + %d recovery resends) of an unrecorded attempt",
				l.MaxReceiveCount, l.MaxResends)},
	}
	// YDB down: each delivery of a saga command runs its first transaction
	// up to YDBTxAttempts times (the first request of each attempt fails),
	// and the advancer fails the batch, so the queue delivers it again until
	// maxReceiveCount moves it to the dead-letter queue. Recovery cannot
	// resend while YDB is down (it reads YDB first).
	out = append(out, bound{Dependency: "YDB", Scenario: "down",
		Calls: l.YDBTxAttempts * l.MaxReceiveCount,
		Product: fmt.Sprintf("%d transaction attempts × %d receives of the saga command; then the message waits in the dead-letter queue",
			l.YDBTxAttempts, l.MaxReceiveCount)})
	// Message Queue down: every outbox row of an order (the first command,
	// order.created, order.confirmed) is tried once on the fast path and
	// RelayMaxAttempts times by the relay, each a SendMessageBatch with the
	// SDK's attempts; a saga command that never leaves is resent by
	// recovery, each resend a new row with the same budget.
	rowsPerOrder := 3
	relayCalls := (1 + l.RelayMaxAttempts) * l.MQCallAttempts
	out = append(out, bound{Dependency: "Message Queue", Scenario: "down",
		Calls: relayCalls*(rowsPerOrder-1) + relayCalls*(1+l.MaxResends),
		Product: fmt.Sprintf("(1 fast path + %d relay attempts) × %d SDK attempts × (%d event rows + 1 command × (1 + %d resends))",
			l.RelayMaxAttempts, l.MQCallAttempts, rowsPerOrder-1, l.MaxResends)})
	return out
}

// batchWorstTime is the longest one advancer invocation can run: the batch
// in rounds of BatchConcurrency, each saga's message chaining steps for at
// most ChainBudget plus one more step.
func (l retryLayers) batchWorstTime() time.Duration {
	rounds := (l.BatchSize + l.BatchConcurrency - 1) / l.BatchConcurrency
	return time.Duration(rounds) * (l.ChainBudget + l.Steps.LongestTimeout())
}

// problems lists every documented bound the configuration exceeds.
func (l retryLayers) problems() []string {
	var out []string
	for _, b := range l.bounds() {
		if b.Limit > 0 && b.Calls > b.Limit {
			out = append(out, fmt.Sprintf("%s %s: %d calls per order exceeds the documented %d", b.Dependency, b.Scenario, b.Calls, b.Limit))
		}
		if b.LimitTime > 0 && b.Duration > b.LimitTime {
			out = append(out, fmt.Sprintf("%s %s: an order may take %s to end, the documented bound is %s", b.Dependency, b.Scenario, b.Duration, b.LimitTime))
		}
	}
	// A batch that outlives the invocation is redelivered whole, which would
	// repeat calls in the "down" scenario too.
	if w := l.batchWorstTime(); w > l.AdvancerTimeout {
		out = append(out, fmt.Sprintf("sagaadvancer: a batch of %d at %d at once may run %s, past the execution timeout %s (the batch would be redelivered)",
			l.BatchSize, l.BatchConcurrency, w, l.AdvancerTimeout))
	}
	return out
}

// printRetries prints the retry-amplification table and returns the
// problems found.
func printRetries(w io.Writer, l retryLayers) []string {
	fmt.Fprintln(w, "Retry amplification per order (worst case; configuration from code defaults, terraform/, triggers/triggers.yaml)")
	fmt.Fprintf(w, "%-17s %-15s %7s %10s  %s\n", "dependency", "scenario", "calls", "ends within", "made of")
	for _, b := range l.bounds() {
		dur := "-"
		if b.Duration > 0 {
			dur = b.Duration.Round(time.Second).String()
		}
		limit := ""
		if b.Limit > 0 {
			limit = fmt.Sprintf(" [documented: ≤ %d calls, ≤ %s]", b.Limit, b.LimitTime)
		}
		fmt.Fprintf(w, "%-17s %-15s %7d %10s  %s%s\n", b.Dependency, b.Scenario, b.Calls, dur, b.Product, limit)
	}
	fmt.Fprintf(w, "advancer batch worst case %s vs execution timeout %s\n", l.batchWorstTime(), l.AdvancerTimeout)
	p := l.problems()
	for _, s := range p {
		fmt.Fprintln(w, "EXCEEDED:", s)
	}
	if len(p) == 0 {
		fmt.Fprintln(w, "every documented bound holds")
	}
	return p
}
