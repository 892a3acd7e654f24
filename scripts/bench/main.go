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
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"ordersaga/shared/transport/mqtrigger"
)

func main() {
	sqs := flag.String("sqs", os.Getenv("ORDERSAGA_SQS_ENDPOINT"), "SQS endpoint (kumo) for the relay measurement")
	orders := flag.Int("orders", 2000, "orders in the API load test")
	clients := flag.Int("clients", 16, "concurrent API clients")
	events := flag.Int("events", 3000, "outbox events in the relay measurement")
	cold := flag.String("coldstart-child", "", "internal: measure one function's cold start in this process")
	burst := flag.Int("burst", 600, "orders in the end-to-end burst (the targets are measured at 600)")
	burstClients := flag.Int("burst-clients", 16, "clients of the end-to-end burst (the targets are measured at 16)")
	e2eOnly := flag.Bool("e2e-only", false, "run only the end-to-end burst, the cost model and the targets it can judge (no SQS needed)")
	concurrency := flag.Int("trigger-concurrency", mqtrigger.DefaultConcurrency, "advancer invocations in flight in the e2e burst (the queue trigger's instances; 1 = the serial loop of before)")
	only := flag.String("only", "", "run only these parts, comma-separated: api, relay, budget, ydbtrips, coldstart, e2e (default: all)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file (go tool pprof -sample_index=alloc_space)")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memprofile)
			must(err)
			must(pprof.Lookup("allocs").WriteTo(f, 0))
			f.Close()
		}()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *cold != "" {
		coldChild(*cold)
		return
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !knownParts[p] {
				fmt.Fprintf(os.Stderr, "bench: -only: unknown part %q (want some of api, relay, budget, ydbtrips, coldstart, e2e)\n", p)
				os.Exit(2)
			}
			parts[p] = true
		}
	}
	if *e2eOnly {
		parts = map[string]bool{"e2e": true}
	}
	run := func(p string) bool { return len(parts) == 0 || parts[p] }
	if run("relay") && *sqs == "" {
		fmt.Fprintln(os.Stderr, "bench: no SQS endpoint: run scripts/bench/run.sh, or pass -sqs / ORDERSAGA_SQS_ENDPOINT (or -only without relay)")
		os.Exit(2)
	}
	start := time.Now()
	var rows []row
	if run("api") {
		rows = append(rows, benchAPI(*orders, *clients)...)
	}
	if run("relay") {
		rows = append(rows, benchRelay(*sqs, *events)...)
	}
	if run("budget") {
		rows = append(rows, benchTxBudget()...)
	}
	if run("ydbtrips") {
		rows = append(rows, benchYDBTrips()...)
		rows = append(rows, benchYDBFake()...)
	}
	if run("coldstart") {
		rows = append(rows, benchColdStart()...)
	}
	if run("e2e") {
		e2e := benchE2E(*burst, *burstClients, *concurrency)
		rows = append(rows, e2eRows(e2e, *burstClients)...)
		rows = append(rows, costRows(e2e)...)
		rows = append(rows, targetRows(&e2e, rows)...)
	} else {
		rows = append(rows, targetRows(nil, rows)...)
	}
	printTable(rows)
	fmt.Printf("\n(total bench time %s; go %s)\n", time.Since(start).Round(time.Second), goVersion())
}

var knownParts = map[string]bool{"api": true, "relay": true, "budget": true, "ydbtrips": true, "coldstart": true, "e2e": true}

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
