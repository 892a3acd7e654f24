package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
)

// outages are the long outages of an Outages run: the payment provider
// down for minutes of fake time and the order-events queue down for a
// minute or more, each while several orders are placed, the world running
// on in one-second ticks between them (triggers, relay and recovery on
// their periods), as it does during a real outage.
type outages struct {
	payment, events window
	eventsDown      atomic.Bool
	redriven        int
}

// window is one outage: it starts before order at, lasts for, and the
// orders at … at+orders-1 are placed while it lasts.
type window struct {
	at, orders int
	dur        time.Duration
}

func (o window) has(i int) bool { return i >= o.at && i < o.at+o.orders }

// Outage lengths: long enough for many breaker periods, lease and recovery
// windows to pass, short enough to stay inside the documented bound of the
// breaker (120 waits, 20 minutes with the default PAYMENT_BREAKER_OPEN_FOR)
// and the relay's give-up horizon the operator redrives after.
const (
	paymentOutageMin, paymentOutageMax = 3 * time.Minute, 8 * time.Minute
	eventsOutageMin, eventsOutageMax   = time.Minute, 3 * time.Minute
	outageTick                         = time.Second
	// minOutageOrders keeps the two windows apart and inside the run.
	minOutageOrders = 40
)

// planOutages draws the two windows from the seed: the payment outage a
// quarter into the orders, the events outage at five eighths.
func planOutages(orders int, seed uint64) *outages {
	r := rand.New(rand.NewPCG(seed, 0x0a7a6e))
	draw := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(r.Int64N(int64(hi-lo)/int64(time.Second)))*time.Second
	}
	return &outages{
		payment: window{at: orders / 4, orders: max(orders/8, 3), dur: draw(paymentOutageMin, paymentOutageMax)},
		events:  window{at: orders * 5 / 8, orders: max(orders/10, 3), dur: draw(eventsOutageMin, eventsOutageMax)},
	}
}

// eventsRefuse is the queue decorators' check: while order-events is down
// every send to it fails before anything is stored.
func (w *world) eventsRefuse(url string) error {
	if w.outages != nil && w.outages.eventsDown.Load() && url == w.eventsURL {
		w.faultsN.add("events_outage_refused", 1)
		return apperr.New(apperr.Transient, "chaos: order-events is down")
	}
	return nil
}

// beforeOrder starts and ends the outages around order i and returns the
// fake time to let pass before placing it (normal: the usual gap).
func (w *world) beforeOrder(ctx context.Context, i int, normal time.Duration) time.Duration {
	o := w.outages
	if o == nil {
		return normal
	}
	switch i {
	case o.payment.at:
		w.sim.SetFaults(1, 0, w.faults.PaymentLatency)
		fmt.Fprintf(w.opts.Log, "chaos: payment provider down for %s (orders %d-%d)\n", o.payment.dur, i, i+o.payment.orders-1)
		w.settings = append(w.settings, fmt.Sprintf("payment outage %s over orders %d-%d", o.payment.dur, i, i+o.payment.orders-1))
	case o.payment.at + o.payment.orders:
		w.idle(ctx, o.payment.dur/time.Duration(o.payment.orders))
		w.sim.SetFaults(w.faults.PaymentFailure, 0, w.faults.PaymentLatency)
		fmt.Fprintf(w.opts.Log, "chaos: payment provider back\n")
	case o.events.at:
		o.eventsDown.Store(true)
		fmt.Fprintf(w.opts.Log, "chaos: order-events down for %s (orders %d-%d)\n", o.events.dur, i, i+o.events.orders-1)
		w.settings = append(w.settings, fmt.Sprintf("order-events outage %s over orders %d-%d", o.events.dur, i, i+o.events.orders-1))
	case o.events.at + o.events.orders:
		w.idle(ctx, o.events.dur/time.Duration(o.events.orders))
		o.eventsDown.Store(false)
		w.idle(ctx, 10*time.Second) // an operator's pace
		w.redriveOutbox(ctx)
		fmt.Fprintf(w.opts.Log, "chaos: order-events back, %d outbox dead letters redriven\n", o.redriven)
	}
	if o.payment.has(i) && i > o.payment.at {
		w.idle(ctx, o.payment.dur/time.Duration(o.payment.orders))
		return 0
	}
	if o.events.has(i) && i > o.events.at {
		w.idle(ctx, o.events.dur/time.Duration(o.events.orders))
		return 0
	}
	return normal
}

// idle lets d of fake time pass in one-second ticks, running the
// advancer's trigger every tick and the relay and the recovery on their
// periods.
func (w *world) idle(ctx context.Context, d time.Duration) {
	for left := d; left > 0 && ctx.Err() == nil; left -= outageTick {
		w.clock.Advance(min(left, outageTick))
		w.pump(ctx, w.pick("advancer"), max(w.faults.BatchesPerTick, 1))
		now := w.clock.Now()
		if now.Sub(w.lastRelay) >= relayPeriod {
			w.lastRelay = now
			w.runRelay(ctx, w.pick("relay"))
		}
		if now.Sub(w.lastRecover) >= recoveryPeriod {
			w.lastRecover = now
			w.runRecovery(ctx, w.pick("recovery"))
		}
	}
}

// redriveOutbox is the operator after the events outage: every open outbox
// dead letter is redriven (the outage made them; the cause is gone).
func (w *world) redriveOutbox(ctx context.Context) {
	for k := 0; k < 20; k++ {
		rep, err := w.app.Commands.Redrive.Execute(ctx, redrive.Command{Action: "redrive", Source: "outbox",
			Filter: &redrive.CommandFilter{Status: "open"}, Max: 1000, RatePerSec: 100, Actor: "chaos", Reason: "order-events is back"})
		if err != nil {
			fmt.Fprintf(w.opts.Log, "chaos: redrive after the events outage: %v\n", err)
			return
		}
		r, _ := rep.(redrive.Report)
		n := r.Redriven
		w.outages.redriven += n
		if n < 1000 {
			return
		}
	}
}
