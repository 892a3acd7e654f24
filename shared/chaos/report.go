package chaos

import (
	"fmt"
	"io"
	"strings"
	"time"

	"ordersaga/shared/order"
)

// report builds the run's Report from the snapshot and the violations.
func (w *world) report(s *snapshot, violations []string) Report {
	r := Report{Seed: w.opts.Seed, Orders: len(w.keys), Requests: int(w.requests.Load()),
		RetriesBy: w.retries.snapshot(), Crashes: w.crashes.snapshot(), Faults: w.faultsN.snapshot(),
		InvocationFailures: w.invFail.snapshot(), Messages: w.msgs.snapshot(),
		DeadLetters: len(s.dead), DeadLettersBy: map[string]int{}, DrainRounds: w.drainRounds,
		Simulated: w.clock.Elapsed(), Violations: append([]string{}, violations...)}
	for _, id := range s.orderIDs {
		switch s.orders[id].Status {
		case order.StatusConfirmed:
			r.Confirmed++
		case order.StatusCancelled:
			r.Cancelled++
		case order.StatusFailed:
			r.Failed++
		}
	}
	for _, d := range s.dead {
		r.DeadLettersBy[string(d.Source)]++
	}
	for _, n := range s.inDLQ {
		r.DLQMoves += n
	}
	for _, n := range w.delivered {
		r.DuplicatesDelivered += max(n-1, 0)
	}
	for _, n := range r.RetriesBy {
		r.Retries += n
	}
	if n := w.sim.Counters().Failures; n > 0 {
		r.Faults["payment_failure"] = n // drawn by the simulator itself
	}
	return r
}

// WriteTable prints the report as a Markdown table, then the violations.
func (r Report) WriteTable(out io.Writer) {
	row := func(k string, v any) { fmt.Fprintf(out, "| %s | %v |\n", k, v) }
	fmt.Fprintf(out, "chaos run: seed %d, %d orders, %s wall, %s simulated\n\n",
		r.Seed, r.Orders, r.Elapsed.Round(time.Millisecond), r.Simulated.Round(time.Second))
	fmt.Fprintln(out, "| metric | value |")
	fmt.Fprintln(out, "|---|---|")
	row("orders", r.Orders)
	row("POST /orders requests", r.Requests)
	row("confirmed", r.Confirmed)
	row("cancelled", r.Cancelled)
	row("failed (dead-lettered)", r.Failed)
	row("duplicates delivered", r.DuplicatesDelivered)
	row("retries", r.Retries)
	group := func(name string, m map[string]int) {
		total := 0
		for _, n := range m {
			total += n
		}
		row(name, total)
		for _, k := range sortedKeys(m) {
			row("&nbsp;&nbsp;"+name+": "+k, m[k])
		}
	}
	for _, k := range sortedKeys(r.RetriesBy) {
		row("&nbsp;&nbsp;retries: "+k, r.RetriesBy[k])
	}
	group("crashes injected", r.Crashes)
	group("faults injected", r.Faults)
	group("invocation failures", r.InvocationFailures)
	group("advancer messages", r.Messages)
	group("dead letters", r.DeadLettersBy)
	row("DLQ moves", r.DLQMoves)
	row("drain rounds", r.DrainRounds)
	row("violations", len(r.Violations))
	if len(r.Violations) > 0 {
		fmt.Fprintf(out, "\nviolations:\n  - %s\n", strings.Join(r.Violations, "\n  - "))
	} else {
		fmt.Fprintln(out, "\nall guarantees held")
	}
}
