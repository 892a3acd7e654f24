package main

import (
	"context"
	"fmt"
	"time"
)

// incident is one scripted incident: when it began and ended (since the
// start) and what it did.
type incident struct {
	Name  string        `json:"name"`
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	Notes []string      `json:"notes,omitempty"`
}

// Where each incident sits in the run, as shares of -duration. Each lasts at
// least a person's pace (seconds), so a 3-minute run still enters and leaves
// every outage the way an operator does.
const (
	atLone     = 0.03 // a lone order while the provider is down
	atPayment  = 0.15 // a payment outage of 20 % of the run (6 minutes of a 30-minute one)
	atEvents   = 0.44 // order-events refuses every message
	atDead     = 0.53 // order-events refuses sku-4's messages: dead events pile up
	atBacklog  = 0.53 // the provider answers in 4.5 s: saga commands wait in the queue
	atKill     = 0.73 // kill -9 of the runner, restarted 3 s later
	atLoadStop = 0.83 // the load stops; the rest of the run drains
)

// pace is how long a person takes between two steps of an incident.
const pace = 3 * time.Second

// at sleeps until the share f of the run has passed.
func (s *soak) at(ctx context.Context, f float64) {
	s.sleepUntil(ctx, time.Duration(f*float64(s.dur)))
}

func (s *soak) sleepUntil(ctx context.Context, t time.Duration) {
	if d := t - s.load.since(); d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
}

func (s *soak) span(f float64, min time.Duration) time.Duration {
	return max(time.Duration(f*float64(s.dur)), min)
}

func (s *soak) logf(format string, a ...any) {
	fmt.Fprintf(s.out, "soak: +%5.1fs %s\n", s.load.since().Seconds(), fmt.Sprintf(format, a...))
}

func (s *soak) begin(name string) *incident {
	s.logf("%s begins", name)
	in := &incident{Name: name, Start: s.load.since()}
	s.incidents = append(s.incidents, in)
	return in
}

func (s *soak) end(in *incident) {
	in.End = s.load.since()
	s.logf("%s ends (%.0f s)", in.Name, (in.End - in.Start).Seconds())
}

// script plays the incidents one after another while the load runs.
func (s *soak) script(ctx context.Context) {
	s.at(ctx, atLone)
	s.loneOrder(ctx)
	s.at(ctx, atPayment)
	s.paymentOutage(ctx)
	s.at(ctx, atEvents)
	s.eventsOutage(ctx)
	s.at(ctx, atDead)
	done := make(chan struct{})
	go func() { defer close(done); s.backlog(ctx) }()
	s.deadEvents(ctx)
	<-done
	s.at(ctx, atKill)
	s.kill(ctx)
}

// loneOrder: the load pauses until nothing is in flight, the provider goes
// down, one order is placed, and the provider comes back after a while.
func (s *soak) loneOrder(ctx context.Context) {
	in := s.begin("lone-order outage")
	s.load.paused.Store(true)
	quiet := s.load.since() + 20*time.Second
	for s.load.unfinished(true) > 0 && s.load.since() < quiet && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
	}
	if n := s.load.unfinished(true); n > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("%d orders still in flight when the lone order was placed", n))
	}
	s.prov.setFailureRate(1)
	s.logf("payment provider down; one order alone")
	s.sleepUntil(ctx, s.load.since()+pace)
	o := s.load.newOrder(s.load.count(), true)
	s.load.place(o)
	s.sleepUntil(ctx, s.load.since()+s.span(0.05, 10*time.Second))
	s.prov.setFailureRate(0)
	s.logf("payment provider back")
	s.sleepUntil(ctx, s.load.since()+pace)
	s.load.paused.Store(false)
	s.end(in)
}

// paymentOutage: the provider degrades (half the calls fail), goes down for
// 20 % of the run, then recovers the same way, a person's pace apart.
func (s *soak) paymentOutage(ctx context.Context) {
	in := s.begin("payment outage")
	s.prov.setFailureRate(0.5)
	s.sleepUntil(ctx, s.load.since()+pace)
	s.prov.setFailureRate(1)
	s.logf("payment provider down")
	s.sleepUntil(ctx, s.load.since()+s.span(0.2, 20*time.Second))
	s.prov.setFailureRate(0.5)
	s.sleepUntil(ctx, s.load.since()+pace)
	s.prov.setFailureRate(0)
	s.logf("payment provider back")
	s.end(in)
}

// eventsOutage: order-events refuses every message (all orders hold
// sku-soak); then the operator fixes it and redrives the dead events.
func (s *soak) eventsOutage(ctx context.Context) {
	in := s.begin("events-queue outage")
	s.setPublishFault(ctx, in, "sku-soak")
	s.sleepUntil(ctx, s.load.since()+s.span(0.07, 10*time.Second))
	s.setPublishFault(ctx, in, "")
	s.end(in)
	s.redriveEvents(ctx, in)
}

// deadEvents: order-events refuses the messages of sku-4 orders (half of
// them) until their events die, more than the relay's claim window
// (4 × RELAY_BATCH_SIZE) with the later events blocked behind them; then
// the operator fixes it and redrives.
func (s *soak) deadEvents(ctx context.Context) {
	in := s.begin("dead events pile up")
	s.setPublishFault(ctx, in, "sku-4")
	s.sleepUntil(ctx, s.load.since()+s.span(0.1, 15*time.Second))
	s.setPublishFault(ctx, in, "")
	s.end(in)
	s.redriveEvents(ctx, in)
}

// backlog: the provider answers every call in 4.5 s (under PAYMENT_TIMEOUT),
// so the advancer's instances are busy and saga commands wait in the queue
// for longer than the recovery window.
func (s *soak) backlog(ctx context.Context) {
	in := s.begin("queue backlog")
	s.prov.setLatency(4500 * time.Millisecond)
	s.sleepUntil(ctx, s.load.since()+s.span(0.2, 30*time.Second))
	s.prov.setLatency(0)
	s.end(in)
}

// kill: kill -9 of the runner while orders are placed and sagas run, and a
// restart on the same data and port 3 s later.
func (s *soak) kill(ctx context.Context) {
	in := s.begin("kill -9")
	s.runner.kill9()
	for _, o := range s.load.snapshotOrders() {
		if id, st := o.snapshot(); id != "" && !final(st) {
			s.interrupted = append(s.interrupted, o)
		}
	}
	s.sleepUntil(ctx, s.load.since()+pace)
	if err := s.runner.start(); err != nil {
		in.Notes = append(in.Notes, "restart failed: "+err.Error())
		s.logf("restart failed: %v", err)
	}
	s.restartedAt = s.load.since()
	s.end(in)
}

func (s *soak) setPublishFault(ctx context.Context, in *incident, sku string) {
	if err := s.api.admin(ctx, "PATCH", "/_faults", map[string]string{"publish_sku": sku}, nil); err != nil {
		in.Notes = append(in.Notes, "PATCH /_faults: "+err.Error())
		s.logf("PATCH /_faults: %v", err)
		return
	}
	s.logf("order-events refuses the messages of orders with %q", sku)
}

// redriveEvents is the operator after an events incident: a pause, then
// bulk redrives of the open outbox dead letters until none is left (at
// most 4 passes, a pause apart: rows die up to RELAY_MAX_ATTEMPTS later).
func (s *soak) redriveEvents(ctx context.Context, in *incident) {
	total := 0
	for pass := 0; pass < 4 && ctx.Err() == nil; pass++ {
		s.sleepUntil(ctx, s.load.since()+pace)
		n, err := s.redriveOutbox(ctx)
		if err != nil {
			in.Notes = append(in.Notes, "redrive: "+err.Error())
			s.logf("redrive: %v", err)
			return
		}
		total += n
		if n == 0 && pass > 0 {
			break
		}
	}
	in.Notes = append(in.Notes, fmt.Sprintf("%d outbox dead letters redriven", total))
	s.redriven += total
	s.logf("%s: %d outbox dead letters redriven", in.Name, total)
}

// redriveOutbox redrives every open outbox dead letter (1000 per call).
func (s *soak) redriveOutbox(ctx context.Context) (int, error) {
	total := 0
	for i := 0; i < 20; i++ {
		var rep struct {
			Selected int `json:"selected"`
			Redriven int `json:"redriven"`
		}
		err := s.api.admin(ctx, "POST", "/admin/dlq/bulk-retry", map[string]any{
			"source": "outbox", "filter": map[string]string{"status": "open"}, "max": 1000, "rate_per_sec": 100,
			"reason": "soak: the events queue is back"}, &rep)
		if err != nil {
			return total, err
		}
		total += rep.Redriven
		if rep.Selected < 1000 {
			return total, nil
		}
	}
	return total, nil
}
