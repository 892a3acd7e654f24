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

// ruOp is the request units of one YDB operation of the adapter as the
// fake YDB server of the adapter's tests counts them (shared/adapters/ydbstore,
// fakeydb_ru_test.go: the real use cases, ydbstore.Open and ydb-go-sdk
// against a gRPC server that records every query; reads are rows read, a
// point read of an absent key counting 1, a VIEW row 2; writes are rows
// and index entries written, an update of an indexed row reading the old
// row and rewriting each index entry whose key changes). Reproduce with
// go test -count=1 -v -run TestRequestUnitsPerOrder ./shared/adapters/ydbstore/
// (its "ydbfake" lines: RPCs, RU, reads, writes; "by table" under each).
type ruOp struct {
	Name   string
	Reads  int
	Writes int
	How    string
}

// RU returns the operation's request units at the published rates.
func (o ruOp) RU() int { return o.Reads*RUPerRead + o.Writes*RUPerWrite }

// ruPerOperation is the fake's count for one confirmed order: the new
// order, whose transaction runs the saga's store-only first steps
// (create_order, reserve_inventory: orchestrator.Start), and the save of
// process_payment with confirm_order (a step that touches only the store
// is saved with the step before it: docs/saga.md, "Step chaining").
var ruPerOperation = []ruOp{
	{"new order + create_order + reserve_inventory", 8, 28,
		"fake YDB: key, reservation and stock reads; INSERT key (+1 index), order (+1 index: by customer), order.created (+2 indexes), the saga as the two steps leave it (+2 indexes), reservation, stock, 2 saga_log lines, process_payment's command (+2 indexes); fast-path publish of both rows: guard 2r, UPDATE 2 outbox rows (old row read, 2 changed index entries each), head promotion"},
	{"saga message process_payment + confirm_order (+ publish)", 11, 22,
		"fake YDB: saga read and lease (old row read, no index entry changed); payment read + INSERT (the participant); order, reservation and stock reads; stock, reservation, order (old row read: it has an index), 2 saga_log lines, inbox, saga UPSERT (old row read, 2 changed index entries), order.confirmed (+2 indexes); fast-path publish of order.confirmed"},
}

// ruNewOrder and ruConfirmedOrder are the model's two inputs (RU per new
// order, RU per confirmed order including its new order), from the fake
// YDB server's count.
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
