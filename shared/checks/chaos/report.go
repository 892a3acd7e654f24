package chaos

import (
	"fmt"
	"io"
	"strings"
	"time"

	"ordersaga/shared/domain/order"
)

// report builds the run's Report from the snapshot and the violations.
func (w *world) report(s *snapshot, violations []string) Report {
	placed := 0
	for _, k := range w.keys {
		if k != nil {
			placed++
		}
	}
	r := Report{Seed: w.opts.Seed, Orders: placed, Requests: int(w.requests.Load()),
		Mode: w.opts.mode(), Settings: append([]string(nil), w.settings...), Refused: int(w.refused.Load()),
		RetriesBy: w.retries.snapshot(), Crashes: w.crashes.snapshot(), Faults: w.faultsN.snapshot(),
		InvocationFailures: w.invFail.snapshot(), Messages: w.msgs.snapshot(),
		DeadLetters: len(s.dead), DeadLettersBy: map[string]int{}, DrainRounds: w.drainRounds,
		Simulated: w.clock.Elapsed(), Violations: append([]string{}, violations...)}
	if w.outages != nil {
		r.OutageRedriven = w.outages.redriven
	}
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
	rows := make(map[string]bool, len(s.outbox))
	for _, e := range s.outbox {
		rows[e.ID] = true
	}
	for _, lines := range s.logs {
		for _, l := range lines {
			if l.MessageID != "" && !rows[l.MessageID] && !w.origin.has(l.MessageID) {
				r.FoldedSteps++
			}
		}
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

// indent marks a sub-row of the table. A plain "↳" reads the same in a
// terminal and in rendered Markdown (HTML entities such as &nbsp; only
// render in the latter).
const indent = "↳ "

// WriteTable prints the report as a Markdown table, then the violations by
// check and the violations themselves.
func (r Report) WriteTable(out io.Writer) {
	row := func(k string, v any) { fmt.Fprintf(out, "| %s | %v |\n", k, v) }
	fmt.Fprintf(out, "chaos run: seed %d, %d orders, mode %s, %s wall, %s simulated\n",
		r.Seed, r.Orders, r.Mode, r.Elapsed.Round(time.Millisecond), r.Simulated.Round(time.Second))
	for _, s := range r.Settings {
		fmt.Fprintf(out, "  setting: %s\n", s)
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| metric | value |")
	fmt.Fprintln(out, "|---|---|")
	row("orders", r.Orders)
	row("POST /orders requests", r.Requests)
	if r.Refused > 0 || strings.Contains(r.Mode, "unicode") {
		row("refused with 400 (Unicode)", r.Refused)
	}
	if r.InTxSends > 0 || r.InTxEvents > 0 || strings.Contains(r.Mode, "intx") {
		row("messages stored by SendInTx (in-tx)", r.InTxSends)
		row("events committed as their message alone (in-tx)", r.InTxEvents)
	}
	if strings.Contains(r.Mode, "outages") {
		row("outbox dead letters redriven after the events outage", r.OutageRedriven)
	}
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
			row(indent+name+": "+k, m[k])
		}
	}
	for _, k := range sortedKeys(r.RetriesBy) {
		row(indent+"retries: "+k, r.RetriesBy[k])
	}
	group("crashes injected", r.Crashes)
	group("faults injected", r.Faults)
	group("invocation failures", r.InvocationFailures)
	group("advancer messages", r.Messages)
	group("dead letters", r.DeadLettersBy)
	row("DLQ moves", r.DLQMoves)
	row("drain rounds", r.DrainRounds)
	row("steps saved with the step before (folded)", r.FoldedSteps)
	total := 0
	for _, n := range r.ViolationsBy {
		total += n
	}
	row("violations", total)
	for _, k := range sortedKeys(r.ViolationsBy) {
		row(indent+"violations: "+k, r.ViolationsBy[k])
	}
	if len(r.Violations) > 0 {
		fmt.Fprintf(out, "\nviolations:\n  - %s\n", strings.Join(r.Violations, "\n  - "))
	} else {
		fmt.Fprintln(out, "\nall guarantees held")
	}
}
