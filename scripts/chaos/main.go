// Command chaos runs ordersaga under injected faults and checks every
// delivery guarantee afterwards (package ordersaga/shared/checks/chaos):
//
//	go run ./scripts/chaos -orders 150 -seed 1 [-v]           # the classic, reproducible run (CI)
//	go run ./scripts/chaos -orders 150 -seed 1 -all           # every mode at once
//	go run ./scripts/chaos -orders 1000 -seeds 1-5 -all       # five seeds, a summary by check
//	go run ./scripts/chaos -long                              # 10 000 orders × seeds 1–5, every mode
//	go run ./scripts/chaos -orders 400 -seeds 1-3 -realclock  # a clock that moves between readings, long outages
//	go run ./scripts/chaos -orders 400 -sharded -concurrent   # hot SKUs on stock sub-rows, rebalanced during the burst
//
// Modes (each also turns on the strict checks; -strict alone adds them to the
// classic run): -concurrent (API clients, advancers, relays and recovery in
// goroutines on one SQLite file), -skew D (every component instance its own
// clock, off by up to ±D), -unicode (random Unicode in every text field),
// -vary (settings drawn from the seed, shard count lowered half-way), -intx (the
// local fast path inside the transaction runs: messages stored in the
// transaction that writes the state change, no outbox row beside them, with
// SendInTx refused or failing; docs/chaos-intx.md), -advancing D (the fake
// clock moves by D after every reading, as a real clock moves between two
// readings), -outages (a sequential run gets a payment outage of 3–8 minutes
// and an order-events outage of 1–3 minutes of fake time, orders placed
// during both, the outbox dead letters redriven afterwards), -realclock
// (-advancing 1ms -outages; docs/soak.md), -sharded (sku-a over 16 stock
// sub-rows and sku-b over 4, rebalanced and re-sharded by an operator
// while the orders run; docs/capacity.md "Hot SKUs").
//
// It prints a table per run (orders, outcomes, duplicates, retries, crashes,
// dead letters, violations by check) and, for several seeds, a summary of
// violations by check and seed. It exits 1 if any guarantee was violated, 2
// if a run could not be carried out. The same seed reproduces the same
// sequential run; concurrent runs interleave as the scheduler wants.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"ordersaga/shared/checks/chaos"
)

func main() {
	orders := flag.Int("orders", 150, "number of orders (distinct idempotency keys)")
	seed := flag.Uint64("seed", 1, "seed of every random choice")
	seeds := flag.String("seeds", "", "run several seeds: a range 1-5 or a list 1,3,7 (overrides -seed)")
	verbose := flag.Bool("v", false, "print progress and the product's logs (JSON) to stderr")
	dir := flag.String("dir", "", "keep the database file (chaos-<seed>.db) in this directory for inspection (default: a temporary one, removed)")
	concurrent := flag.Bool("concurrent", false, "run API clients, advancers, relays and recovery in goroutines at once on one SQLite file")
	clients := flag.Int("clients", 8, "concurrent API clients (-concurrent)")
	advancers := flag.Int("advancers", 3, "advancer instances (-concurrent)")
	relays := flag.Int("relays", 2, "relay instances (-concurrent)")
	skew := flag.Duration("skew", 0, "give every component instance its own clock, off by up to ± this much (e.g. 3s)")
	unicode := flag.Bool("unicode", false, "put random Unicode (noncharacters, invalid UTF-8, RTL, emoji, combining marks) in every text field")
	vary := flag.Bool("vary", false, "draw the settings from the seed (short leases, long breaker windows) and lower OUTBOX_SHARDS half-way")
	intx := flag.Bool("intx", false, "let the fast path inside the transaction run (messages stored with the state change, no outbox row), with SendInTx refusals and failures")
	strict := flag.Bool("strict", false, "add the strict checks (event order, stock settlement, stuck sagas, publishability, outage cancellations)")
	advancing := flag.Duration("advancing", 0, "move the fake clock forward by this much after every reading (e.g. 1ms), as a real clock moves")
	outages := flag.Bool("outages", false, "a payment outage of 3-8 minutes and an order-events outage of 1-3 minutes of fake time, orders placed during both (sequential runs)")
	sharded := flag.Bool("sharded", false, "spread sku-a over 16 sub-rows and sku-b over 4, and rebalance and re-shard them while the orders run")
	realclock := flag.Bool("realclock", false, "-advancing 1ms -outages: the cases a clock that never moves between readings and short outages never reach")
	all := flag.Bool("all", false, "every mode: -concurrent -skew 3s -unicode -vary -strict")
	long := flag.Bool("long", false, "the long run: 10 000 orders on seeds 1-5 with -all (several minutes per seed)")
	flag.Parse()

	if *long {
		*orders, *seeds, *all = 10_000, "1-5", true
	}
	if *all {
		*concurrent, *unicode, *vary, *strict = true, true, true, true
		if *skew == 0 {
			*skew = 3 * time.Second
		}
	}
	if *realclock {
		*outages = true
		if *advancing == 0 {
			*advancing = time.Millisecond
		}
	}
	list := []uint64{*seed}
	if *seeds != "" {
		var err error
		if list, err = parseSeeds(*seeds); err != nil {
			fmt.Fprintln(os.Stderr, "chaos: -seeds:", err)
			os.Exit(2)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var log io.Writer = io.Discard
	if *verbose {
		log = os.Stderr
	}
	var reps []chaos.Report
	began := time.Now()
	for _, s := range list {
		rep, err := chaos.Run(ctx, chaos.Options{Orders: *orders, Seed: s, Verbose: *verbose, Log: log, Dir: *dir,
			Concurrent: *concurrent, Clients: *clients, Advancers: *advancers, Relays: *relays,
			Skew: *skew, Unicode: *unicode, Vary: *vary, Strict: *strict, InTx: *intx,
			Advancing: *advancing, Outages: *outages, Sharded: *sharded})
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: seed %d: %v\n", s, err)
			os.Exit(2)
		}
		rep.WriteTable(os.Stdout)
		fmt.Println()
		reps = append(reps, rep)
	}
	if len(reps) > 1 {
		writeSummary(os.Stdout, reps, time.Since(began))
	}
	for _, r := range reps {
		if !r.OK() {
			os.Exit(1)
		}
	}
}

// parseSeeds reads "1-5" or "1,3,7".
func parseSeeds(s string) ([]uint64, error) {
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := strconv.ParseUint(hi, 10, 64)
		if err1 != nil || err2 != nil || b < a || b-a > 1000 {
			return nil, fmt.Errorf("want a range like 1-5, got %q", s)
		}
		var out []uint64
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out, nil
	}
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want seeds like 1,3,7, got %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// writeSummary prints violations by check (rows) and seed (columns), with
// each run's outcome and wall time.
func writeSummary(out io.Writer, reps []chaos.Report, wall time.Duration) {
	checks := map[string]bool{}
	for _, r := range reps {
		for k := range r.ViolationsBy {
			checks[k] = true
		}
	}
	fmt.Fprintf(out, "summary: %d runs, mode %s, %s wall\n\n", len(reps), reps[0].Mode, wall.Round(time.Second))
	fmt.Fprint(out, "| check |")
	for _, r := range reps {
		fmt.Fprintf(out, " seed %d |", r.Seed)
	}
	fmt.Fprint(out, "\n|---|")
	for range reps {
		fmt.Fprint(out, "---|")
	}
	fmt.Fprintln(out)
	line := func(name string, v func(chaos.Report) string) {
		fmt.Fprintf(out, "| %s |", name)
		for _, r := range reps {
			fmt.Fprintf(out, " %s |", v(r))
		}
		fmt.Fprintln(out)
	}
	line("orders (confirmed/cancelled/failed)", func(r chaos.Report) string {
		return fmt.Sprintf("%d (%d/%d/%d)", r.Orders, r.Confirmed, r.Cancelled, r.Failed)
	})
	line("wall time", func(r chaos.Report) string { return r.Elapsed.Round(100 * time.Millisecond).String() })
	names := make([]string, 0, len(checks))
	for k := range checks {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		line("violations: "+k, func(r chaos.Report) string { return strconv.Itoa(r.ViolationsBy[k]) })
	}
	line("violations (all)", func(r chaos.Report) string {
		n := 0
		for _, v := range r.ViolationsBy {
			n += v
		}
		return strconv.Itoa(n)
	})
}
