package main

import (
	"fmt"
	"sort"
)

var finalEvent = map[string]string{"CONFIRMED": "order.confirmed", "CANCELLED": "order.cancelled", "FAILED": "order.failed"}

// eventsChecks: every accepted order's order.created and final event are on
// order-events (published at least once, none left unpublished), each
// event once after dropping duplicates by event id, order.created first;
// and one order per idempotency key.
func (c *checker) eventsChecks(orders []*orderRec) {
	type seen struct {
		ids   map[string]map[string]bool // event type → event ids
		first []string                   // event types in first-arrival order
	}
	byOrder := map[string]*seen{}
	keyOrders := map[string]map[string]bool{}
	arrived, dups := map[string]bool{}, 0
	for _, e := range c.f.events {
		if arrived[e.EventID] {
			dups++
			continue
		}
		arrived[e.EventID] = true
		s := byOrder[e.OrderID]
		if s == nil {
			s = &seen{ids: map[string]map[string]bool{}}
			byOrder[e.OrderID] = s
		}
		if s.ids[e.EventType] == nil {
			s.ids[e.EventType] = map[string]bool{}
		}
		s.ids[e.EventType][e.EventID] = true
		s.first = append(s.first, e.EventType)
		if e.EventType == "order.created" {
			if keyOrders[e.Key] == nil {
				keyOrders[e.Key] = map[string]bool{}
			}
			keyOrders[e.Key][e.OrderID] = true
		}
	}
	var missing, order []string
	known := map[string]bool{}
	for _, o := range orders {
		id, st := o.snapshot()
		known[id] = true
		s := byOrder[id]
		want := []string{"order.created"}
		if fe, ok := finalEvent[st]; ok {
			want = append(want, fe)
		}
		for _, t := range want {
			if s == nil || len(s.ids[t]) == 0 {
				missing = append(missing, fmt.Sprintf("%s never published: %s", t, c.describe(o)))
				break
			}
		}
		if s == nil {
			continue
		}
		for t, ids := range s.ids {
			if len(ids) > 1 {
				order = append(order, fmt.Sprintf("order %s has %d distinct %s events", id, len(ids), t))
			}
		}
		if len(s.first) > 0 && s.first[0] != "order.created" {
			order = append(order, fmt.Sprintf("order %s: %s arrived before order.created", id, s.first[0]))
		}
		finals := 0
		for _, t := range s.first {
			if t != "order.created" {
				finals++
			}
		}
		if fe := finalEvent[st]; finals > 1 || (finals == 1 && len(s.ids[fe]) == 0) {
			order = append(order, fmt.Sprintf("order %s is %s but its final events are %v", id, st, s.first[1:]))
		}
	}
	for id := range byOrder {
		if !known[id] {
			order = append(order, "events of an order no client was told about: "+id)
		}
	}
	if n := c.f.unsent["pending"] + c.f.unsent["dead"]; n > 0 {
		missing = append([]string{fmt.Sprintf("order-events outbox rows never published: %v (%d redriven by the operator)", c.f.unsent, c.s.redriven)}, missing...)
	}
	sort.Strings(order)
	c.add("events-published", missing, fmt.Sprintf("%d messages on order-events, %d duplicates dropped by event id, %d dead events redriven", len(c.f.events), dups, c.s.redriven))
	c.add("events-once-in-order", order, fmt.Sprintf("%d orders' events", len(byOrder)))
	var once []string
	for k, ids := range keyOrders {
		if len(ids) > 1 {
			once = append(once, fmt.Sprintf("key %s created %d orders", k, len(ids)))
		}
	}
	c.add("exactly-once-per-key", once, fmt.Sprintf("%d keys created an order", len(keyOrders)))
}
