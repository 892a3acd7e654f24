// Command bench measures ordersaga side by side with its raw building blocks
// in one run, and prints ratios (these machines are noisy: absolute numbers
// vary, ratios measured together are what we compare).
//
//	scripts/bench/run.sh            # starts the SQS emulator, then runs this
//	go run ./scripts/bench -sqs URL # with an emulator already running
//
// Measurements:
//  1. orders/s through the local HTTP API (real handler, loopback, concurrent
//     clients, some reusing keys) vs single-row SQLite transactions/s on the same disk;
//  2. relay events/s vs raw SendMessageBatch messages/s to the same SQS server;
//  3. store transactions per new order and per replay;
//  4. cold start of each function's composition root (fresh process);
//  5. peak memory of one invocation of each function vs a 128 MB function.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	sqs := flag.String("sqs", os.Getenv("ORDERSAGA_SQS_ENDPOINT"), "SQS endpoint (kumo) for the relay measurement")
	orders := flag.Int("orders", 2000, "orders in the API load test")
	clients := flag.Int("clients", 16, "concurrent API clients")
	events := flag.Int("events", 3000, "outbox events in the relay measurement")
	cold := flag.String("coldstart-child", "", "internal: measure one function's cold start in this process")
	flag.Parse()
	if *cold != "" {
		coldChild(*cold)
		return
	}
	if *sqs == "" {
		fmt.Fprintln(os.Stderr, "bench: no SQS endpoint: run scripts/bench/run.sh, or pass -sqs / ORDERSAGA_SQS_ENDPOINT")
		os.Exit(2)
	}
	start := time.Now()
	var rows []row
	rows = append(rows, benchAPI(*orders, *clients)...)
	rows = append(rows, benchRelay(*sqs, *events)...)
	rows = append(rows, benchTxBudget()...)
	rows = append(rows, benchYDBTrips()...)
	rows = append(rows, benchColdStart()...)
	printTable(rows)
	fmt.Printf("\n(total bench time %s; go %s)\n", time.Since(start).Round(time.Second), goVersion())
}

type row struct {
	what, value, baseline, ratio string
}

func printTable(rows []row) {
	fmt.Println("| measurement | ordersaga | baseline (same run) | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.value, r.baseline, r.ratio)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
