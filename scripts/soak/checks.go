package main

import (
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/adapters/paymentsim"
)

// result is one guarantee checked at the end of the run.
type result struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// stockRow is one SKU of GET /admin/stock.
type stockRow struct {
	SKU       string `json:"sku"`
	Available int64  `json:"available"`
	Reserved  int64  `json:"reserved"`
	Sold      int64  `json:"sold"`
}

// final state the checks read, gathered after the drain.
type finalState struct {
	initial  map[string]int64 // SKU → units set before the first order
	stock    []stockRow
	money    paymentsim.Counters
	events   []published
	unsent   map[string]int // order-events outbox rows never published, by status
	deadline time.Duration  // every saga had until then to end
}

// checker collects results.
type checker struct {
	s   *soak
	f   finalState
	res []result
}

func (c *checker) add(name string, problems []string, okDetail string) {
	r := result{Name: name, Pass: len(problems) == 0, Detail: okDetail}
	if !r.Pass {
		r.Detail = summarize(problems)
	}
	c.res = append(c.res, r)
}

func summarize(problems []string) string {
	if len(problems) <= 5 {
		return strings.Join(problems, "; ")
	}
	return fmt.Sprintf("%d problems, first 5: %s", len(problems), strings.Join(problems[:5], "; "))
}

// accepted returns the orders the API accepted (a 201 gave their id).
func (c *checker) accepted() []*orderRec {
	var out []*orderRec
	for _, o := range c.s.load.snapshotOrders() {
		if id, _ := o.snapshot(); id != "" {
			out = append(out, o)
		}
	}
	return out
}

// during names the incident an order was placed in (or "" for none); an
// order placed up to 2 s before an incident counts as placed in it.
func (c *checker) during(o *orderRec) []string {
	var in []string
	for _, i := range c.s.incidents {
		if o.placedAt >= i.Start-2*time.Second && o.placedAt <= i.End {
			in = append(in, i.Name)
		}
	}
	return in
}

func (c *checker) describe(o *orderRec) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprintf("%s (%s, placed +%.0fs in [%s]) %s %q saga %s/%s attempts %d: %.120s", o.key, o.id,
		o.placedAt.Seconds(), strings.Join(c.during(o), ","), o.status, o.reason,
		o.view.Saga.State, o.view.Saga.Step, o.view.Saga.Attempts, o.view.Saga.LastError)
}

func (c *checker) run() []result {
	orders := c.accepted()
	c.outcomes(orders)
	c.ended(orders)
	c.eventsChecks(orders)
	c.stockMoney(orders)
	c.s.load.mu.Lock()
	hist := append([]op(nil), c.s.load.history...)
	c.s.load.mu.Unlock()
	for _, byOrder := range []bool{false, true} {
		r := checkLinearizable(hist, byOrder, 30*time.Second)
		name, what := "linearizable-per-key", "idempotency keys"
		if byOrder {
			name, what = "linearizable-per-order", "orders"
		}
		var problems []string
		for _, p := range r.Illegal {
			problems = append(problems, "not linearizable: "+p)
		}
		for _, p := range r.TimedOut {
			problems = append(problems, "checker timed out on "+p)
		}
		c.add(name, problems, fmt.Sprintf("%d %s, %d requests", r.Partitions, what, len(hist)))
	}
	return c.res
}

// outcomes: every soak order is payable and in stock, so it must be
// CONFIRMED; a cancellation or failure is an incident's doing. Each
// incident's orders are reported under a check of their own.
func (c *checker) outcomes(orders []*orderRec) {
	checks := []struct{ name, incident, bad string }{
		{"lone-order-confirmed", "lone-order outage", ""},
		{"payment-outage-cancels-nothing", "payment outage", "CANCELLED"},
		{"backlog-fails-nothing", "queue backlog", "FAILED"},
	}
	for _, ck := range checks {
		var problems []string
		n := 0
		for _, o := range orders {
			in := strings.Join(c.during(o), ",")
			_, st := o.snapshot()
			switch {
			case ck.incident == "lone-order outage" && o.lone:
				n++
				if st != "CONFIRMED" {
					problems = append(problems, "the lone order is not CONFIRMED: "+c.describe(o))
				}
			case ck.bad != "" && strings.Contains(in, ck.incident):
				n++
				if st == ck.bad {
					problems = append(problems, c.describe(o))
				}
			}
		}
		c.add(ck.name, problems, fmt.Sprintf("%d orders", n))
	}
	var problems []string
	byStatus := map[string]int{}
	for _, o := range orders {
		_, st := o.snapshot()
		byStatus[st]++
		if final(st) && st != "CONFIRMED" {
			problems = append(problems, c.describe(o))
		}
	}
	c.add("every-order-confirmed", problems, fmt.Sprintf("%v", byStatus))
}

// ended: every saga ended by the deadline, and the orders a kill -9
// interrupted within 45 s of the restart (README: a crash costs about one
// lease).
func (c *checker) ended(orders []*orderRec) {
	var problems []string
	for _, o := range orders {
		if _, st := o.snapshot(); !final(st) {
			problems = append(problems, "not final at +"+fmt.Sprint(c.f.deadline.Round(time.Second))+": "+c.describe(o))
		}
	}
	c.add("every-saga-ended", problems, fmt.Sprintf("%d orders final", len(orders)))
	problems = nil
	slowest := time.Duration(0)
	for _, o := range c.s.interrupted {
		o.mu.Lock()
		took := o.finalAt - c.s.restartedAt
		o.mu.Unlock()
		slowest = max(slowest, took)
		if took > 45*time.Second || !final(o.status) {
			problems = append(problems, fmt.Sprintf("final %.0f s after the restart: %s", took.Seconds(), c.describe(o)))
		}
	}
	c.add("kill9-resumed-within-45s", problems, fmt.Sprintf("%d orders interrupted, all final within %.0f s of the restart", len(c.s.interrupted), slowest.Seconds()))
}

// stockMoney: no SKU negative; available + reserved + sold is what was set;
// nothing stays reserved once every saga ended; sold is what CONFIRMED
// orders bought; charged − refunded is the total of CONFIRMED orders, one
// charge per confirmed saga.
func (c *checker) stockMoney(orders []*orderRec) {
	sold := map[string]int64{}
	var confirmedTotal int64
	confirmed := 0
	for _, o := range orders {
		if _, st := o.snapshot(); st == "CONFIRMED" {
			confirmed++
			confirmedTotal += o.total
			for sku, q := range o.items {
				sold[sku] += q
			}
		}
	}
	var problems []string
	for _, r := range c.f.stock {
		if r.Available < 0 || r.Reserved < 0 || r.Sold < 0 {
			problems = append(problems, fmt.Sprintf("%s negative: %+v", r.SKU, r))
		}
		if init, ok := c.f.initial[r.SKU]; ok && r.Available+r.Reserved+r.Sold != init {
			problems = append(problems, fmt.Sprintf("%s: available %d + reserved %d + sold %d != %d set", r.SKU, r.Available, r.Reserved, r.Sold, init))
		}
		if r.Reserved != 0 {
			problems = append(problems, fmt.Sprintf("%s: %d units still reserved after every saga ended", r.SKU, r.Reserved))
		}
		if r.Sold != sold[r.SKU] {
			problems = append(problems, fmt.Sprintf("%s: sold %d, CONFIRMED orders bought %d", r.SKU, r.Sold, sold[r.SKU]))
		}
	}
	c.add("stock-conserved", problems, fmt.Sprintf("%d SKUs", len(c.f.stock)))
	problems = nil
	m := c.f.money
	if got := m.ChargedMinor - m.RefundedMinor; got != confirmedTotal {
		problems = append(problems, fmt.Sprintf("charged %d − refunded %d = %d, CONFIRMED orders total %d", m.ChargedMinor, m.RefundedMinor, got, confirmedTotal))
	}
	if got := m.Charges - m.Refunds; got != confirmed {
		problems = append(problems, fmt.Sprintf("%d charges − %d refunds = %d, %d CONFIRMED orders", m.Charges, m.Refunds, got, confirmed))
	}
	c.add("money-balances", problems, fmt.Sprintf("charged %d, refunded %d, %d CONFIRMED orders", m.ChargedMinor, m.RefundedMinor, confirmed))
}
