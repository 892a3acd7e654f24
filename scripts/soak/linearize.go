package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// The histories of concurrent POST and GET requests are checked for
// linearizability with porcupine, per idempotency key and per order: there
// must be one order of the requests, each taking effect at one instant
// between its call and its answer, that the sequential models below accept.
// A request without an answer (connection refused during the kill -9, a
// timeout, a 5xx) may have taken effect at any instant after its call, or
// not at all.

// keyState is what one idempotency key holds: the order it created (id,
// and which body, variant) and whether a request without an answer may
// have created it already (maybe).
type keyState struct {
	id, variant string
	maybe       bool
}

// keyModel: the first POST of a key creates its order (a 201 that is not a
// replay); every later POST with the same body replays that order (201,
// Idempotent-Replayed, the same id), and one with another body gets 422.
// A 409 (in progress) changes nothing.
var keyModel = porcupine.Model{
	Init: func() any { return keyState{} },
	Step: func(state, input, output any) (bool, any) {
		s, o := state.(keyState), output.(op)
		switch {
		case o.Code == 0: // no answer
			if s.id == "" {
				s.maybe = true
			}
			return true, s
		case o.Code == 409:
			return true, s
		case o.Code == 201 && !o.Replayed:
			if s.id != "" {
				return false, s
			}
			return true, keyState{id: o.OrderID, variant: o.Variant}
		case o.Code == 201:
			if s.id == "" && s.maybe {
				return true, keyState{id: o.OrderID, variant: o.Variant}
			}
			return s.id == o.OrderID && s.variant == o.Variant, s
		case o.Code == 422:
			return (s.id != "" && s.variant != o.Variant) || (s.id == "" && s.maybe), s
		}
		return true, s // other refusals are counted apart; they change nothing
	},
	DescribeOperation: func(_, output any) string { return describe(output.(op)) },
}

// orderState is what GET /orders/{id} can see of one order.
type orderState struct {
	exists bool
	status string
}

// statusRank orders the statuses an order passes through: PENDING, then
// one final status that never changes.
func statusRank(s string) int {
	if final(s) {
		return 1
	}
	return 0
}

// orderModel: once a POST answered with the order (or a GET found it), a
// GET finds it; its status never goes back to PENDING and a final status
// never changes.
var orderModel = porcupine.Model{
	Init: func() any { return orderState{} },
	Step: func(state, input, output any) (bool, any) {
		s, o := state.(orderState), output.(op)
		switch {
		case o.Code == 0:
			return true, s
		case o.Kind == "post" && o.Code == 201:
			if !s.exists {
				return true, orderState{exists: true, status: "PENDING"}
			}
			return true, s
		case o.Kind == "get" && o.Code == 404:
			return !s.exists, s
		case o.Kind == "get" && o.Code == 200:
			if s.exists && (statusRank(o.Status) < statusRank(s.status) || (final(s.status) && o.Status != s.status)) {
				return false, s
			}
			return true, orderState{exists: true, status: o.Status}
		}
		return true, s
	},
	DescribeOperation: func(_, output any) string { return describe(output.(op)) },
}

func describe(o op) string {
	return fmt.Sprintf("%s %s %s → %d %s %s", o.Kind, o.Key, o.Variant, o.Code, o.OrderID, o.Status)
}

// linResult is the outcome of one check over many partitions.
type linResult struct {
	Partitions int      `json:"partitions"`
	Illegal    []string `json:"illegal,omitempty"`   // partitions with no valid order
	TimedOut   []string `json:"timed_out,omitempty"` // partitions the checker gave up on
}

// checkLinearizable checks each partition of history (by key when byOrder
// is false, else by order id) with the model.
func checkLinearizable(history []op, byOrder bool, timeout time.Duration) linResult {
	parts := map[string][]porcupine.Operation{}
	for _, h := range history {
		name := h.Key
		model := h.Kind == "post"
		if byOrder {
			name = h.OrderID
			model = h.OrderID != "" && (h.Kind == "get" || h.Code == 201)
		}
		if !model {
			continue
		}
		ret := h.Return
		if ret < 0 {
			ret = math.MaxInt64 / 2 // no answer: it may take effect at any later instant
		}
		parts[name] = append(parts[name], porcupine.Operation{ClientId: h.Client, Input: h, Call: h.Call, Output: h, Return: ret})
	}
	model := keyModel
	if byOrder {
		model = orderModel
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	res := linResult{Partitions: len(names)}
	for _, n := range names {
		switch porcupine.CheckOperationsTimeout(model, parts[n], timeout) {
		case porcupine.Illegal:
			res.Illegal = append(res.Illegal, n)
		case porcupine.Unknown:
			res.TimedOut = append(res.TimedOut, n)
		}
	}
	return res
}
