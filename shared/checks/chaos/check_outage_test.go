package chaos

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
)

// Step-log errors as the product writes them for process_payment.
const (
	provider503  = "payment.charge: gave up after 3 attempts: paymentsim: injected failure"
	opened503    = provider503 + " (breaker payment is open)"
	refused      = "breaker payment: circuit breaker is open"
	storeFault   = "chaos: store unavailable"
	readFault    = "chaos: store unavailable for reads"
	stepFault    = "chaos: process_payment unavailable"
	abortedFault = "chaos: transaction aborted after its work"
)

// payLog builds a process_payment step log from (outcome, error, seconds
// after t0) triples: the outcome's first letter (w waiting, r retry, f
// failed) and the error.
func payLog(t0 time.Time, runs ...string) []saga.LogEntry {
	var out []saga.LogEntry
	for i, r := range runs {
		o, rest, _ := strings.Cut(r, "|")
		at, text, _ := strings.Cut(rest, "|")
		sec, err := time.ParseDuration(at)
		if err != nil {
			panic(err)
		}
		outcome := map[string]saga.Outcome{"w": saga.OutcomeWaiting, "r": saga.OutcomeRetry, "f": saga.OutcomeFailed}[o]
		out = append(out, saga.LogEntry{Seq: i + 3, Step: saga.StepProcessPayment, Direction: saga.Forward,
			Outcome: outcome, Attempt: i + 1, Error: text, At: t0.Add(sec)})
	}
	return out
}

// TestOutageCancelJudgesTheProvidersFailures holds the outage-cancel
// check to the README's promise: an order cancelled at process_payment
// under the decline limit is a violation when a transient failure ended
// the step before the outage bound had passed since its first wait
// (whatever spent its earlier attempts: the provider through a closed
// breaker, or the harness's own store and step faults), when a failure of
// a provider that was down spent an attempt within the outage bound, or
// when the step was refused for good; not when the step gave up after
// the bound.
func TestOutageCancelJudgesTheProvidersFailures(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	gaveUp := "process_payment: gave up after 5 attempts"
	tests := []struct {
		name   string
		total  int64
		reason string
		log    []saga.LogEntry
		want   string // "" means no violation
	}{{
		name: "harness faults spent the budget while the step waited, the last not held",
		log: payLog(t0, "w|1s|"+opened503, "w|14s|"+refused, "r|60s|"+stepFault, "w|62s|"+opened503,
			"w|110s|"+refused, "r|242s|"+readFault, "r|246s|"+stepFault, "w|248s|"+refused,
			"r|451s|"+abortedFault, "f|458s|"+storeFault),
		reason: gaveUp,
		want:   "gave up 7m37s after its first wait",
	}, {
		name: "harness faults spent the budget, the last held for the bound",
		log: payLog(t0, "w|1s|"+opened503, "w|14s|"+refused, "r|60s|"+stepFault, "w|62s|"+opened503,
			"w|110s|"+refused, "r|242s|"+readFault, "r|246s|"+stepFault, "w|248s|"+refused,
			"r|451s|"+abortedFault, "w|458s|"+storeFault, "w|519s|"+stepFault, "f|21m|"+storeFault),
		reason: gaveUp,
	}, {
		name: "the breaker's threshold, then one harness fault, the last not held",
		log: payLog(t0, "r|2s|"+provider503, "r|4s|"+provider503, "r|6s|"+provider503, "r|8s|"+provider503,
			"w|12s|"+opened503, "w|25s|"+refused, "w|300s|"+refused, "f|376s|"+storeFault),
		reason: gaveUp,
		want:   "its last attempt was not held",
	}, {
		name: "the provider's failures alone spent the budget",
		log: payLog(t0, "r|2s|"+provider503, "r|4s|"+provider503, "r|6s|"+provider503, "r|8s|"+provider503,
			"f|10s|"+provider503),
		reason: gaveUp,
		want:   "gave up without waiting",
	}, {
		name: "a harness fault spent an attempt, then an outage the rest through a closed breaker",
		log: payLog(t0, "r|2s|"+stepFault, "r|60s|"+provider503, "r|62s|"+provider503, "r|65s|"+provider503,
			"f|69s|"+provider503),
		reason: gaveUp,
		want:   "4 of its 5 attempts were spent by the provider's failures",
	}, {
		name: "the provider's failures spent the budget, the last held for the bound",
		log: payLog(t0, "r|2s|"+provider503, "r|4s|"+provider503, "r|6s|"+provider503, "r|8s|"+provider503,
			"w|10s|"+provider503, "w|71s|"+provider503, "w|19m|"+provider503, "f|20m11s|"+provider503),
		reason: gaveUp,
	}, {
		name: "a refusal of the open breaker spent an attempt within the bound",
		log: payLog(t0, "w|1s|"+opened503, "r|14s|"+refused, "r|20s|"+stepFault, "r|30s|"+readFault,
			"r|40s|"+storeFault, "f|50s|"+storeFault),
		reason: gaveUp,
		want:   "spent attempt 2 on a provider that was down",
	}, {
		name: "a refusal spent an attempt after the bound",
		log: payLog(t0, "w|1s|"+opened503, "w|14s|"+refused, "r|21m|"+refused, "r|22m|"+stepFault,
			"r|23m|"+readFault, "r|24m|"+storeFault, "f|25m|"+storeFault),
		reason: gaveUp,
	}, {
		name:   "refused for good under the decline limit",
		log:    payLog(t0, "f|1s|payments: invalid charge"),
		reason: "process_payment: invalid charge",
		want:   "refused for good",
	}, {
		name:   "above the decline limit",
		total:  2_000_000,
		log:    payLog(t0, "f|1s|payment declined"),
		reason: "process_payment: payment declined",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			total := tc.total
			if total == 0 {
				total = 172_964
			}
			inst := saga.Instance{ID: "s1", State: saga.StateCompensated,
				Data: saga.Data{OrderID: "o1", TotalMinor: total, FailureReason: tc.reason}}
			c := &checker{w: &world{cfg: cfg}, by: map[string]int{}, name: "outage-cancel",
				s: &snapshot{sagaIDs: []string{"s1"}, sagas: map[string]saga.Instance{"s1": inst},
					logs: map[string][]saga.LogEntry{"s1": tc.log}}}
			c.outageCancel()
			switch {
			case tc.want == "" && len(c.out) > 0:
				t.Errorf("violation %q, want none", c.out)
			case tc.want != "" && (len(c.out) != 1 || !strings.Contains(c.out[0], tc.want)):
				t.Errorf("violations %q, want one mentioning %q", c.out, tc.want)
			}
		})
	}
}

// TestCheckerCatchesAnOutageThatSpendsAttempts breaks the promise on
// purpose — the advancer waits for a provider that is down for 1 ns
// instead of 20 minutes, so every refusal after the first spends an
// attempt — and expects the real-clock run's payment outage, with no
// other fault, to cancel orders the check reports.
func TestCheckerCatchesAnOutageThatSpendsAttempts(t *testing.T) {
	rep := run(t, Options{Orders: 60, Seed: 3, Faults: &Faults{}, Advancing: time.Millisecond, Outages: true,
		TamperAdvancer: func(c *orchestrator.AdvancerConfig) { c.OutageBound = time.Nanosecond }})
	wantViolation(t, rep, "on a provider that was down")
	if rep.ViolationsBy["outage-cancel"] == 0 {
		t.Errorf("violations %v, want outage-cancel ones", rep.ViolationsBy)
	}
}
