// Command capacity is the capacity model of ordersaga on Yandex serverless
// (YDB, Message Queue, Cloud Functions) for a target rate of new orders and
// an SKU popularity, and the worst-case retry amplification per order
// computed from the deployed configuration. docs/capacity.md explains the
// model, its sources and what it leaves out.
//
//	go run ./scripts/capacity                 # the capacity table for 100 / 1 000 / 10 000 orders/s
//	go run ./scripts/capacity -retries        # the retry bound; exit status 1 when a documented bound is exceeded
//	go run ./scripts/capacity -sqlite 2000    # reservations of one SKU on the local SQLite store vs the serial-commit bound
//	go run ./scripts/capacity -sqlite 2000 -subrows 16  # the same on 1 row and on 16 stock sub-rows
//	go run ./scripts/capacity -subrows 16     # the model with the flash-sale SKU on 16 sub-rows
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"ordersaga/shared/domain/inventory"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("capacity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "repository root (terraform/, triggers/, docs/)")
	retries := fs.Bool("retries", false, "print the retry-amplification bound and fail when a documented bound is exceeded")
	seed := fs.Uint64("seed", 1, "seed of the conflict simulation")
	skus := fs.Int("skus", 10000, "SKUs in the catalogue (uniform and Zipf popularity)")
	sqliteN := fs.Int("sqlite", 0, "measure this many reservations of one SKU on the local SQLite store (serial, then a burst) and stop")
	clients := fs.Int("clients", 16, "concurrent clients of the -sqlite burst")
	subRows := fs.Int("subrows", 1, "stock sub-rows of the hot SKU: the model's flash-sale row divides by it; -sqlite measures 1 row and this many")
	rtt := fs.Duration("rtt", defaultAssumptions().RTT, "assumed YDB round trip from a function")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "capacity: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *sqliteN != 0 {
		if *sqliteN < 1 || *clients < 1 || *subRows < 1 || *subRows > inventory.MaxShards {
			fmt.Fprintf(stderr, "capacity: -sqlite and -clients must be positive, -subrows 1..%d (got %d, %d, %d)\n",
				inventory.MaxShards, *sqliteN, *clients, *subRows)
			return 2
		}
		dir, err := os.MkdirTemp("", "capacity-sqlite")
		if err != nil {
			fmt.Fprintln(stderr, "capacity:", err)
			return 2
		}
		defer os.RemoveAll(dir)
		m, err := measureSQLite(context.Background(), dir, *sqliteN, *clients, 1)
		if err != nil {
			fmt.Fprintln(stderr, "capacity:", err)
			return 1
		}
		printSQLite(stdout, m)
		if *subRows > 1 {
			many, err := measureSQLite(context.Background(), dir, *sqliteN, *clients, *subRows)
			if err != nil {
				fmt.Fprintln(stderr, "capacity:", err)
				return 1
			}
			printSQLite(stdout, many)
			printSubRowsSpeedup(stdout, m, many)
		}
		return 0
	}
	d, err := loadDeployment(*root)
	if err != nil {
		fmt.Fprintln(stderr, "capacity:", err)
		return 2
	}
	if *retries {
		l, err := layersFrom(d)
		if err != nil {
			fmt.Fprintln(stderr, "capacity:", err)
			return 2
		}
		if len(printRetries(stdout, l)) > 0 {
			return 1
		}
		return 0
	}
	a := defaultAssumptions()
	a.RTT, a.SKUs, a.Seed, a.SubRows = *rtt, *skus, *seed, *subRows
	if err := a.validate(); err != nil {
		fmt.Fprintln(stderr, "capacity:", err)
		return 2
	}
	printCapacity(stdout, d, a)
	printSubRows(stdout, d, a)
	return 0
}
