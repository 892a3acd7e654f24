package main

// Platform limits and prices the model uses. Each names its public source
// (repository yandex-cloud/docs unless a URL is given); docs/capacity.md
// lists them in one table.
const (
	// YDB: "Request cost for YQL" (en/ydb/pricing/ru-yql.md): one read
	// (row or 4 KB block) 1 RU, one write (row or 1 KB block) 2 RU,
	// index I/O included, deletes charged by number.
	RUPerRead  = 1
	RUPerWrite = 2
	// YDB serverless quota: 1 000 RU/s per cloud (en/_includes/ydb/ydb-limits.md).
	YDBCloudQuotaRU = 1000
	// Provisioned throughput: 1 ₽ per 100 RU/s per hour
	// (ru/_pricing/ydb/rub-serverless.md); the price per RU is not published
	// as a number.
	ProvisionedRUBPer100RUsHour = 1.0

	// Message Queue quotas (en/_includes/message-queue/ymq-limits.md):
	// standard queue 300 send/receive/delete/visibility calls/s per queue,
	// FIFO 30/s, in flight 120 000 (standard) / 20 000 (FIFO), 10 queues per
	// cloud.
	MQStandardCallsPerQueue = 300
	MQFIFOCallsPerQueue     = 30
	MQInFlightStandard      = 120000
	MQInFlightFIFO          = 20000
	MQQueuesPerCloud        = 10
	// Standard queues: 48.76 ₽ per 1 M requests (ru/_pricing/message-queue/rub.md);
	// a running trigger's receives and deletes are free
	// (en/functions/concepts/trigger/ymq-trigger.md).
	MQRUBPerMillion = 48.76

	// Cloud Functions quotas (en/_includes/functions-limits.md): 10
	// instances per availability zone, 10 concurrent calls per zone (all
	// functions of the cloud together).
	FnInstancesPerAZ = 10
	FnCallsPerAZ     = 10
	// Invocations above 1 M a month: 16 ₽ per 1 M
	// (ru/_pricing/functions/rub-invocations.md); GB·hour is not published
	// as a number.
	FnRUBPerMillionInvocations = 16.0
)

// ruOp is the request units of one YDB operation of the adapter, counted
// from its statements (the sequences shared/ydbstore/ydbtrips prints) and
// the migrated schema (schema/ydb): reads are rows read (a point read of an
// absent key counts 1; an INSERT reads its key first), writes are rows and
// index entries written; an UPSERT of an indexed row reads the old row and
// rewrites each index entry whose key changes (erase + insert: 2 writes).
type ruOp struct {
	Name   string
	Reads  int
	Writes int
	How    string
}

// RU returns the operation's request units at the published rates.
func (o ruOp) RU() int { return o.Reads*RUPerRead + o.Writes*RUPerWrite }

// Indexes of the migrated schema that a confirmed order writes:
// sagas idx_bucket_state_next and idx_bucket_state_updated (2),
// idempotency_keys idx_bucket_status_locked (1), outbox
// idx_status_shard_next and idx_aggregate (2); orders, inbox, saga_log,
// stock, reservations and payments have none.
//
// Every outbox INSERT first reads MAX(aggregate_seq) of its aggregate
// through idx_aggregate, which does not cover aggregate_seq: one index row
// and one table row per row the aggregate already has (an empty read
// counts 1). A saga has 4 command rows, an order 2 event rows.
var ruPerOperation = []ruOp{
	{"new order", 13, 22,
		"key read 1; INSERT key (1r, row+1 index), order (1r+1w), saga (1r, row+2 index), saga.advance and order.created (each 1r key + 1r empty seq read, row+2 index), guard 1r; publish: guard 2r, UPDATE 2 outbox rows (2r, row + 2 changed index entries ×2 each)"},
	{"step create_order", 9, 10,
		"saga 1r, token 1r; UPSERT saga (1r, row + 2 changed index entries ×2), inbox (1r+1w), saga_log (1r+1w), next command (1r, seq 1 index + 1 table row, row+2 index), guard 1r"},
	{"step reserve_inventory", 15, 17,
		"reservation 1r, stock 1r; stock 1w, reservation (1r+1w), guard 1r, saga (1r+5w), inbox (1r+1w), saga_log (1r+1w), command (1r, seq 2+2r, 3w), 2 guard reads, mark previous command (1r+5w)"},
	{"step process_payment", 16, 16,
		"payment 1r; INSERT payment (1r+1w); guard 1r, saga (1r+5w), inbox (1r+1w), saga_log (1r+1w), command (1r, seq 3+3r, 3w), 2 guard reads, mark previous command (1r+5w)"},
	{"step confirm_order + publish", 17, 23,
		"stock 1r, earliest pending 2r; stock 1w, reservation 1w, order 1w (3 guard reads), saga (1r+5w), inbox (1r+1w), saga_log (1r+1w), order.confirmed (1r, seq 1+1r, 3w), 2 guard reads, mark command (1r+5w); publish: guard 1r, UPDATE (1r+5w)"},
}

// ruNewOrder and ruConfirmedOrder are the model's two inputs (RU per new
// order, RU per confirmed order including its new order). The YDB fake
// server's per-operation count replaces them when it lands.
func ruNewOrder() int { return ruPerOperation[0].RU() }

func ruConfirmedOrder() int {
	n := 0
	for _, o := range ruPerOperation {
		n += o.RU()
	}
	return n
}

// Measured in scripts/bench (docs/bench.md, "Benchmark" and "Cost model"):
const (
	// advancer invocations per confirmed order (batch of 10, steps chained).
	BenchAdvancerInvocationsPerOrder = 0.105
	// function GB·s per confirmed order at 256 MB, 100 ms rounding.
	BenchGBsPerOrder = 0.0306
	// POST /orders alone, p99.
	BenchPostP99Seconds = 0.014
	// Message Queue requests billed per confirmed order (SendMessageBatch).
	BenchMQSendsPerOrder = 3.0
	// function invocations per confirmed order (orderapi + sagaadvancer).
	BenchInvocationsPerOrder = 1.105
)
