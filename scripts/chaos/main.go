// Command chaos runs ordersaga under injected faults and checks every
// delivery guarantee afterwards (package ordersaga/shared/chaos):
//
//	go run ./scripts/chaos -orders 150 -seed 1 [-v]
//
// It prints a table (orders, confirmed, cancelled, failed, duplicates
// delivered, retries, crashes, dead letters, DLQ moves, violations) and
// exits 1 if any guarantee was violated, 2 if the run could not be carried
// out. The same seed reproduces the same run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"ordersaga/shared/chaos"
)

func main() {
	orders := flag.Int("orders", 150, "number of orders (distinct idempotency keys)")
	seed := flag.Uint64("seed", 1, "seed of every random choice")
	verbose := flag.Bool("v", false, "print progress and the product's logs (JSON) to stderr")
	dir := flag.String("dir", "", "keep the database file (chaos-<seed>.db) in this directory for inspection (default: a temporary one, removed)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var log io.Writer = io.Discard
	if *verbose {
		log = os.Stderr
	}
	rep, err := chaos.Run(ctx, chaos.Options{Orders: *orders, Seed: *seed, Verbose: *verbose, Log: log, Dir: *dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	rep.WriteTable(os.Stdout)
	if !rep.OK() {
		os.Exit(1)
	}
}
