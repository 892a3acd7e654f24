package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store/bucket"
)

// assumptions are the model's inputs that no document or measurement
// fixes; docs/capacity.md names each.
type assumptions struct {
	// RTT is one YDB request from a function (serverless endpoint).
	RTT time.Duration
	// SKUs in the catalogue for the uniform and Zipf distributions.
	SKUs int
	// Zones the functions run in (ru-central1 has three).
	Zones int
	// PartitionTPS is the row transactions per second one YDB partition
	// (data shard, single-threaded) sustains; not documented.
	PartitionTPS float64
	// SDKBackoffBase and SDKBackoffCap: the jitter of the SDK's re-run of an
	// ABORTED transaction.
	SDKBackoffBase, SDKBackoffCap time.Duration
	Seed                          uint64
	SimDuration                   time.Duration
	// SubRows is the number of stock sub-rows the most popular SKU is
	// spread over (operator's PUT /admin/stock/{sku}/shards); 1: one row.
	SubRows int
}

func defaultAssumptions() assumptions {
	return assumptions{RTT: 5 * time.Millisecond, SKUs: 10000, Zones: 3, PartitionTPS: 1000,
		SDKBackoffBase: 5 * time.Millisecond, SDKBackoffCap: 50 * time.Millisecond, Seed: 1, SimDuration: 20 * time.Second, SubRows: 1}
}

func (a assumptions) validate() error {
	switch {
	case a.RTT <= 0:
		return fmt.Errorf("-rtt must be positive (got %s)", a.RTT)
	case a.SKUs < 2:
		return fmt.Errorf("-skus must be at least 2 (got %d)", a.SKUs)
	case a.SubRows < 1 || a.SubRows > inventory.MaxShards:
		return fmt.Errorf("-subrows must be 1..%d (got %d)", inventory.MaxShards, a.SubRows)
	}
	return nil
}

// popularity is an SKU popularity distribution; Top is the share of orders
// that go to the most popular SKU.
type popularity struct {
	Name string
	Top  float64
}

// popularities returns uniform, Zipf s = 1.1 and a flash sale over n SKUs.
func popularities(n int) []popularity {
	h := 0.0
	for k := 1; k <= n; k++ {
		h += math.Pow(float64(k), -1.1)
	}
	return []popularity{
		{"uniform", 1 / float64(n)},
		{"zipf s=1.1", 1 / h},
		{"flash sale 50%", 0.5},
	}
}

// wall is one limit the rate is checked against: Load at the rate, the
// Limit, and what moves it.
type wall struct {
	Name  string
	Load  float64
	Limit float64
	Unit  string
	Move  string
}

// Headroom is Limit/Load: below 1 the wall is hit.
func (w wall) Headroom() float64 { return w.Limit / w.Load }

// row is the model's answer for one rate and popularity.
type row struct {
	Rate        float64
	Pop         popularity
	RUps        float64
	HotRowTPS   float64 // transactions per second on one row (sub-row) of the most popular SKU
	HotSKUTPS   float64 // on all its rows
	SubRows     int
	Sim         simResult // one row (sub-row); the SKU's rows see SubRows times its rates
	Bound       float64   // serial-commit bound of one row
	OutboxTail  float64   // writes/s on the outbox due index tail (per shard)
	SagaTail    float64   // writes/s on one saga index bucket's tail
	Partitions  int       // partitions the tails need at PartitionTPS (half load, the split threshold)
	MQ          map[string]float64
	InFlight    float64
	APIInst     float64
	AdvInst     float64
	RUBPerHour  float64
	RUPerHour   float64
	ProvRUBHour float64
	Walls       []wall
}

// stockTxPerOrder: transactions that write the ordered SKU's stock row
// (reserve_inventory, confirm_order).
const stockTxPerOrder = 2

// Per confirmed order, entries written at the tail of the outbox due
// index (every row is inserted there and moved once when published: 2
// outbox rows of the new order, process_payment's command,
// order.confirmed = 4 rows; steps that touch only the store are saved with
// the step before them and write no command) and of sagas
// idx_bucket_state_next (the insert and 2 saves). Both indexes lead with
// the row's bucket (store/bucket), so each has bucket.N tails per shard.
const (
	outboxTailWritesPerOrder = 8
	sagaTailWritesPerOrder   = 3
	sagaBuckets              = bucket.N
	outboxBuckets            = bucket.N
)

// model computes one row.
func model(d deployment, a assumptions, rate float64, p popularity) row {
	r := row{Rate: rate, Pop: p, MQ: map[string]float64{}}
	r.RUps = rate * float64(ruConfirmedOrder())
	r.RUPerHour = r.RUps * 3600
	r.SubRows = max(a.SubRows, 1)
	r.HotSKUTPS = rate * p.Top * stockTxPerOrder
	// Each order's reservation and settlement write the one sub-row its saga
	// id hashes to (a uniform spread), and only read the stock row, which
	// nothing but an operator writes: the rows' conflicts are independent.
	r.HotRowTPS = r.HotSKUTPS / float64(r.SubRows)

	// The stock row's transaction holds its read for one round trip before
	// the commit's round trip.
	window := 2 * a.RTT
	steps := orchestrator.CreateOrderSaga.Table()
	reserve := saga.StepDef{RetryPolicy: saga.RetryPolicy{MaxAttempts: 5}}
	for _, s := range steps {
		if s.Name == saga.StepReserveInventory {
			reserve = s
		}
	}
	r.Bound = serialBound(window)
	r.Sim = simulate(simConfig{Rate: r.HotRowTPS, Window: window, TxAttempts: ydbstore.DefaultMaxAttempts,
		BackoffBase: a.SDKBackoffBase, BackoffCap: a.SDKBackoffCap, StepAttempts: reserve.MaxAttempts,
		StepRetryAfter: ceilSecond(d.Cfg.Saga.BackoffBase), Duration: simDuration(a, r.HotRowTPS, 2*time.Duration(reserve.MaxAttempts)*ceilSecond(d.Cfg.Saga.BackoffBase)), Seed: a.Seed})

	shards := max(d.Cfg.Relay.Shards, 1)
	r.OutboxTail = rate * outboxTailWritesPerOrder / float64(shards*outboxBuckets)
	r.SagaTail = rate * sagaTailWritesPerOrder / sagaBuckets
	perPart := a.PartitionTPS / 2 // partitions split by load at 50 % CPU
	r.Partitions = int(math.Ceil(r.OutboxTail/perPart))*shards*outboxBuckets + int(math.Ceil(r.SagaTail/perPart))*sagaBuckets

	// Message Queue calls per queue. saga-commands: the first command of each
	// order (fast path, one SendMessageBatch per new order) and the trigger's
	// receive and delete per batch. order-events: order.created and
	// order.confirmed, one call each on the fast path.
	batch := 10
	for _, qt := range d.Triggers.QueueTriggers {
		if qt.Function == "sagaadvancer" {
			batch = qt.BatchSize
		}
	}
	r.MQ["saga-commands"] = rate + 2*rate/float64(batch)
	r.MQ["order-events"] = 2 * rate
	// In flight: the batch being advanced (received, not yet deleted).
	advDur := advancerDuration(d, a)
	r.InFlight = rate * advDur.Seconds()

	// Concurrent function calls = arrivals × duration.
	apiDur := time.Duration(BenchPostP99Seconds*float64(time.Second)) + 3*a.RTT
	r.APIInst = rate * apiDur.Seconds()
	r.AdvInst = rate / float64(batch) * advDur.Seconds()

	// ₽ per hour of the published prices (VAT incl.), free tiers not subtracted.
	r.RUBPerHour = rate * 3600 * (BenchInvocationsPerOrder*FnRUBPerMillionInvocations + BenchMQSendsPerOrder*MQRUBPerMillion) / 1e6
	r.ProvRUBHour = r.RUps / 100 * ProvisionedRUBPer100RUsHour

	calls := float64(FnCallsPerAZ * a.Zones)
	r.Walls = []wall{
		{"YDB throughput limit (terraform ydb_throttling_rcu_limit)", r.RUps, float64(d.YDBThrottleRU), "RU/s",
			"raise var.ydb_throttling_rcu_limit (it is a cost guard; size it from RU/s here)"},
		{"YDB serverless quota per cloud", r.RUps, YDBCloudQuotaRU, "RU/s",
			"quota request, or provisioned RU/s; fewer rows and index entries per step"},
		{"hot stock row (serial commits)", r.HotRowTPS, r.Bound, "tx/s",
			fmt.Sprintf("more stock sub-rows for the hot SKU (now %d: PUT /admin/stock/{sku}/shards), or a shorter read→commit window", r.SubRows)},
		{"hot SKU's partitions (one per sub-row at most)", r.HotSKUTPS, perPart * float64(r.SubRows), "tx/s",
			"more sub-rows (each can become a partition of its own when YDB splits stock_shards by load)"},
		{"outbox due-index tail per shard and bucket", r.OutboxTail, perPart, "writes/s",
			fmt.Sprintf("OUTBOX_SHARDS (now %d; each has %d bucket tails)", shards, outboxBuckets)},
		{"saga due-index tail per bucket", r.SagaTail, perPart, "writes/s", "more index buckets (store/bucket)"},
		{"Message Queue saga-commands calls", r.MQ["saga-commands"], MQStandardCallsPerQueue, "calls/s",
			"batch first commands through the relay (10 per call), or spread over several queues (10 per cloud)"},
		{"Message Queue order-events calls", r.MQ["order-events"], MQStandardCallsPerQueue, "calls/s",
			"publish events through the relay's batches of 10 instead of one call per transaction"},
		{"Cloud Functions concurrent calls (all functions)", r.APIInst + r.AdvInst, calls, "calls",
			"quota request (10 per zone by default); fewer round trips per call"},
	}
	return r
}

// advancerDuration is one advancer invocation: the larger of the bench's
// local measurement (GB·s per order at 256 MB, less the orderapi
// invocation's 100 ms, over the advancer invocations per order) and the YDB
// round trips of a batch (13 per saga message, the batch in rounds of
// SAGA_BATCH_CONCURRENCY).
func advancerDuration(d deployment, a assumptions) time.Duration {
	mem := float64(d.FunctionMemoryMB["sagaadvancer"]) / 1024
	local := (BenchGBsPerOrder/mem - 0.1) / BenchAdvancerInvocationsPerOrder
	batch := 10
	for _, qt := range d.Triggers.QueueTriggers {
		if qt.Function == "sagaadvancer" {
			batch = qt.BatchSize
		}
	}
	rounds := math.Ceil(float64(batch) / float64(max(d.Cfg.Saga.BatchConcurrency, 1)))
	cloud := rounds * 13 * a.RTT.Seconds()
	return time.Duration(math.Max(local, cloud) * float64(time.Second))
}

// simDuration simulates about 20 000 arrivals on the row, at least long
// enough for a transaction to spend every step attempt (so give-ups show),
// at most a.SimDuration unless that minimum needs more.
func simDuration(a assumptions, rate float64, minimum time.Duration) time.Duration {
	d := time.Duration(20000 / math.Max(rate, 1e-9) * float64(time.Second))
	return max(min(d, a.SimDuration), minimum)
}

// firstWall is the wall with the least headroom.
func (r row) firstWall() wall {
	ws := append([]wall(nil), r.Walls...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Headroom() < ws[j].Headroom() })
	return ws[0]
}

var targetRates = []float64{100, 1000, 10000}

func printCapacity(w io.Writer, d deployment, a assumptions) {
	fmt.Fprintf(w, "Capacity model (assumptions: YDB round trip %s, %d SKUs, %d zones, %.0f tx/s per partition; seed %d)\n",
		a.RTT, a.SKUs, a.Zones, a.PartitionTPS, a.Seed)
	fmt.Fprintf(w, "RU per new order %d, per confirmed order %d (counted by the YDB fake server of shared/adapters/ydbstore's tests: TestRequestUnitsPerOrder)\n\n",
		ruNewOrder(), ruConfirmedOrder())
	fmt.Fprintf(w, "%-7s %-15s %9s %9s %8s %9s %8s %9s %6s %7s %7s %7s %8s %7s %9s %10s\n",
		"rate/s", "popularity", "RU/s", "hot tx/s", "bound", "commit/s", "ABORT/s", "retries/s", "gaveup", "outbox", "saga", "parts", "cmd q/s", "evt q/s", "fn calls", "₽/hour")
	flash := map[float64]row{}
	for _, rate := range targetRates {
		for _, p := range popularities(a.SKUs) {
			r := model(d, a, rate, p)
			flash[rate] = r // the last popularity, the flash sale
			fmt.Fprintf(w, "%-7.0f %-15s %9.0f %9.2f %8.0f %9.1f %8.1f %9.1f %6.1f %7.0f %7.0f %7d %8.0f %7.0f %9.1f %10.0f\n",
				rate, p.Name, r.RUps, r.HotRowTPS, r.Bound, r.Sim.Committed, r.Sim.Aborted, r.Sim.TxRetries+r.Sim.StepFails,
				r.Sim.GivenUp, r.OutboxTail, r.SagaTail, r.Partitions, r.MQ["saga-commands"], r.MQ["order-events"], r.APIInst+r.AdvInst, r.RUBPerHour)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Walls, in the order a growing rate hits them (the hot row at the flash sale; each wall's orders/s is linear in the rate):")
	for _, rate := range targetRates {
		r := flash[rate]
		ws := append([]wall(nil), r.Walls...)
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].Headroom() < ws[j].Headroom() })
		fw := ws[0]
		fmt.Fprintf(w, "%.0f orders/s: first wall %s: %.0f %s against %.0f; moves with: %s\n", rate, fw.Name, fw.Load, fw.Unit, fw.Limit, fw.Move)
		for _, x := range ws {
			mark := "ok "
			if x.Headroom() <= 1 {
				mark = "HIT"
			}
			fmt.Fprintf(w, "  %s %-50s %10.0f / %-8.0f %-8s reached at %8.1f orders/s; moves with: %s\n",
				mark, x.Name, x.Load, x.Limit, x.Unit, rate*x.Headroom(), x.Move)
		}
		fmt.Fprintf(w, "  YDB %.3g RU per hour (price per RU not published; provisioned %.0f RU/s: %.0f ₽/hour); Message Queue in flight %.0f of %d; concurrent calls: sagaadvancer %.1f, orderapi %.1f; tail prefixes needed %d\n",
			r.RUPerHour, r.RUps, r.ProvRUBHour, r.InFlight, MQInFlightStandard, r.AdvInst, r.APIInst, r.Partitions)
	}
}

// subRowSteps are the sub-row counts printSubRows compares.
var subRowSteps = []int{1, 4, 16, 64}

// printSubRows shows the hot-row wall of the flash sale moving with the
// number of stock sub-rows: the load on one sub-row, the simulated commits
// and aborts on it, and the orders/s at which the wall is reached.
func printSubRows(w io.Writer, d deployment, a assumptions) {
	steps := append([]int(nil), subRowSteps...)
	if a.SubRows > 1 && !contains(steps, a.SubRows) {
		steps = append(steps, a.SubRows)
		sort.Ints(steps)
	}
	const rate = 1000
	flash := popularities(a.SKUs)[2]
	fmt.Fprintf(w, "\nHot SKU on stock sub-rows (%s at %d orders/s; a sub-row's transactions conflict only with that sub-row's):\n", flash.Name, rate)
	fmt.Fprintf(w, "  %-8s %12s %8s %14s %14s %10s %22s\n", "sub-rows", "tx/s per row", "bound", "commit/s (all)", "ABORT/s (all)", "gave up/s", "hot-row wall at orders/s")
	for _, n := range steps {
		b := a
		b.SubRows = n
		r := model(d, b, rate, flash)
		fmt.Fprintf(w, "  %-8d %12.1f %8.0f %14.1f %14.1f %10.2f %22.0f\n", n, r.HotRowTPS, r.Bound,
			r.Sim.Committed*float64(n), r.Sim.Aborted*float64(n), r.Sim.GivenUp*float64(n), rate*r.Bound/r.HotRowTPS)
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
