package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/checks/ydbtrips"
)

// The cost model's YDB row: round trips per confirmed order, counted
// server-free on one order run end to end through the YDB adapter over a
// recorder (new order with its fast-path dispatch, then every saga step as
// the queue delivers it). The burst itself runs on SQLite; its round trips
// per order are the same business operations.
func init() {
	ydbTripsPerOrder = func() (float64, string, bool) {
		dir, err := os.MkdirTemp("", "bench-ydbtrips")
		if err != nil {
			return 0, "", false
		}
		defer os.RemoveAll(dir)
		ops, err := ydbtrips.Measure(context.Background(), dir, false)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: YDB round-trip recorder:", err)
			return 0, "", false
		}
		return float64(ydbtrips.PerOrder(ops)), "queries + commits, counted server-free by shared/checks/ydbtrips on one confirmed order: new order and its 4 steps", true
	}
}

// benchYDBTrips prints the YDB round trips per business operation, counted
// server-free by package ydbtrips, with the adapter's deferred writes
// (today) and with immediate writes (every write on its own round trip), and the rows
// each list query may read. Nothing here talks to a YDB server.
func benchYDBTrips() []row {
	measure := func(immediate bool) []ydbtrips.Op {
		dir, err := os.MkdirTemp("", "bench-ydbtrips")
		must(err)
		defer os.RemoveAll(dir)
		ops, err := ydbtrips.Measure(context.Background(), dir, immediate)
		must(err)
		return ops
	}
	after, before := measure(false), measure(true)
	var rows []row
	for i, o := range after {
		target := "-"
		if t, ok := ydbtrips.Targets[o.Name]; ok {
			target = fmt.Sprint(t)
		} else if strings.HasPrefix(o.Name, "saga step") {
			target = fmt.Sprint(ydbtrips.StepTarget)
		}
		rows = append(rows, row{"YDB round trips: " + o.Name, fmt.Sprint(o.Trips.Total()),
			fmt.Sprintf("%d before; target %s", before[i].Trips.Total(), target),
			fmt.Sprintf("%.2f", float64(o.Trips.Total())/float64(max(1, before[i].Trips.Total())))})
	}
	rows = append(rows, row{"YDB round trips per confirmed order", fmt.Sprint(ydbtrips.PerOrder(after)),
		fmt.Sprintf("%d before", ydbtrips.PerOrder(before)),
		fmt.Sprintf("%.2f", float64(ydbtrips.PerOrder(after))/float64(ydbtrips.PerOrder(before)))})
	for _, b := range ydbstore.ReadBounds() {
		rows = append(rows, row{"YDB rows read at most: " + b.Query, b.Rows, b.Index, "-"})
	}
	return rows
}
