package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// orderRec is one order of the workload (one idempotency key).
type orderRec struct {
	n        int
	key      string
	body     []byte
	total    int64
	items    map[string]int64
	placedAt time.Duration // first POST sent, since the start
	lone     bool

	mu       sync.Mutex
	id       string
	status   string
	reason   string
	view     orderView
	finalAt  time.Duration
	lastPoll time.Duration
}

func (o *orderRec) snapshot() (id, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.id, o.status
}

// op is one HTTP request of the history, checked for linearizability:
// every attempt of a retrying client is an operation of its own.
type op struct {
	Client  int    `json:"client"`
	Kind    string `json:"kind"` // post or get
	Key     string `json:"key"`
	Variant string `json:"variant,omitempty"` // post: "a" (the order's body) or "b" (another body)
	OrderID string `json:"order_id,omitempty"`
	Call    int64  `json:"call_ns"`
	Return  int64  `json:"return_ns"` // -1: no answer (the outcome is unknown)
	Code    int    `json:"code"`
	// Replayed is a 201 with Idempotent-Replayed: true; Status is a GET's order status.
	Replayed bool   `json:"replayed,omitempty"`
	Status   string `json:"status,omitempty"`
}

// load places orders at a fixed rate from concurrent, retrying clients and
// polls them until they are final, recording every request.
type load struct {
	api    *api
	t0     time.Time
	rate   float64
	rnd    *rand.Rand
	rndMu  sync.Mutex
	paused atomic.Bool

	mu      sync.Mutex
	orders  []*orderRec
	history []op
	clients atomic.Int64
	wg      sync.WaitGroup
}

func (l *load) since() time.Duration { return time.Since(l.t0) }

func (l *load) float() float64 {
	l.rndMu.Lock()
	defer l.rndMu.Unlock()
	return l.rnd.Float64()
}

func (l *load) intN(n int) int {
	l.rndMu.Lock()
	defer l.rndMu.Unlock()
	return l.rnd.IntN(n)
}

func (l *load) record(o op) {
	l.mu.Lock()
	l.history = append(l.history, o)
	l.mu.Unlock()
}

// newOrder makes the n-th order: one unit of sku-soak (every order has it,
// so a publish fault on it is an outage of order-events) and 1–3 units of
// sku-1…sku-4 (sku-4 in half of them).
func (l *load) newOrder(n int, lone bool) *orderRec {
	sku := "sku-4"
	if l.float() >= 0.5 {
		sku = fmt.Sprintf("sku-%d", 1+l.intN(3))
	}
	qty, price := int64(1+l.intN(3)), int64(1000+l.intN(9000))
	o := &orderRec{n: n, key: fmt.Sprintf("soak-%d", n), lone: lone,
		items: map[string]int64{"sku-soak": 1, sku: qty}, total: 100 + qty*price}
	o.body = orderBody(n, sku, qty, price)
	l.mu.Lock()
	l.orders = append(l.orders, o)
	l.mu.Unlock()
	return o
}

func orderBody(n int, sku string, qty, price int64) []byte {
	b, _ := json.Marshal(map[string]any{"customer_id": fmt.Sprintf("soak-c-%d", n%50), "currency": "RUB",
		"items": []map[string]any{{"sku": "sku-soak", "quantity": 1, "unit_price_minor": 100},
			{"sku": sku, "quantity": qty, "unit_price_minor": price}}})
	return b
}

// run places orders at l.rate until ctx ends; paused ticks place nothing.
func (l *load) run(ctx context.Context) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if l.paused.Load() {
			continue
		}
		l.place(l.newOrder(l.count(), false))
	}
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.orders)
}

// place POSTs the order from 1 client, or 2–3 at once with the same key
// (15 %); 5 % of keys are reused afterwards with another body (422).
func (l *load) place(o *orderRec) {
	o.placedAt = l.since()
	posters := 1
	if l.float() < 0.15 {
		posters = 2 + l.intN(2)
	}
	mismatch := l.float() < 0.05
	for i := 0; i < posters; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.post(o, "a", o.body)
			if mismatch && i == 0 {
				var other map[string]any
				_ = json.Unmarshal(o.body, &other)
				other["customer_id"] = "soak-other"
				b, _ := json.Marshal(other)
				l.post(o, "b", b)
			}
		}()
	}
}

// post sends one POST until it gets an answer that ends it (201, 4xx other
// than 409), retrying after no answer, a 409 or a 5xx for up to 2 minutes.
func (l *load) post(o *orderRec, variant string, body []byte) {
	client := int(l.clients.Add(1))
	deadline := l.since() + 2*time.Minute
	for l.since() < deadline {
		call := l.since()
		rep := l.api.do(context.Background(), "POST", "/orders", "dev-user", o.key, body)
		h := op{Client: client, Kind: "post", Key: o.key, Variant: variant, Call: int64(call), Return: int64(l.since()), Code: rep.code}
		if rep.err != nil || rep.code >= 500 {
			h.Return, h.Code = -1, 0 // the outcome is unknown
		}
		if rep.code == 201 {
			var v orderView
			_ = json.Unmarshal(rep.body, &v)
			h.OrderID, h.Replayed = v.ID, rep.hdr.Get("Idempotent-Replayed") == "true"
			o.mu.Lock()
			if o.id == "" && variant == "a" {
				o.id, o.status = v.ID, v.Status
			}
			o.mu.Unlock()
		}
		l.record(h)
		if rep.code == 201 || (rep.code >= 400 && rep.code < 500 && rep.code != 409) {
			return
		}
		time.Sleep(time.Duration(200+l.intN(500)) * time.Millisecond)
	}
}

// get reads the order once, records the request and updates the record.
func (l *load) get(o *orderRec) {
	id, _ := o.snapshot()
	if id == "" {
		return
	}
	call := l.since()
	rep := l.api.do(context.Background(), "GET", "/orders/"+id, "dev-user", "", nil)
	h := op{Client: int(l.clients.Add(1)), Kind: "get", Key: o.key, OrderID: id, Call: int64(call), Return: int64(l.since()), Code: rep.code}
	if rep.err != nil || rep.code >= 500 {
		h.Return, h.Code = -1, 0
	}
	var v orderView
	if rep.code == 200 && json.Unmarshal(rep.body, &v) == nil {
		h.Status = v.Status
		o.mu.Lock()
		o.status, o.reason, o.view = v.Status, v.StatusReason, v
		if final(v.Status) && o.finalAt == 0 {
			o.finalAt = l.since()
		}
		o.mu.Unlock()
	}
	l.record(h)
}

// poll GETs every order that is not final, each at most once per every,
// from 8 workers, until ctx ends.
func (l *load) poll(ctx context.Context, every time.Duration) {
	work := make(chan *orderRec)
	for i := 0; i < 8; i++ {
		go func() {
			for o := range work {
				l.get(o)
			}
		}()
	}
	defer close(work)
	for ctx.Err() == nil {
		now := l.since()
		for _, o := range l.snapshotOrders() {
			o.mu.Lock()
			due := o.id != "" && !final(o.status) && now-o.lastPoll >= every
			if due {
				o.lastPoll = now
			}
			o.mu.Unlock()
			if due {
				select {
				case work <- o:
				case <-ctx.Done():
					return
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (l *load) snapshotOrders() []*orderRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*orderRec(nil), l.orders...)
}

// unfinished counts the orders that are not final yet: the accepted ones,
// and with inFlight also those whose POST has no answer yet.
func (l *load) unfinished(inFlight bool) int {
	n := 0
	for _, o := range l.snapshotOrders() {
		if id, st := o.snapshot(); (id != "" || inFlight) && !final(st) {
			n++
		}
	}
	return n
}
