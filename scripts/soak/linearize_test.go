package main

import (
	"testing"
	"time"
)

func post(client int, key, variant string, call, ret int64, code int, id string, replayed bool) op {
	return op{Client: client, Kind: "post", Key: key, Variant: variant, Call: call, Return: ret, Code: code, OrderID: id, Replayed: replayed}
}

func get(client int, key, id string, call, ret int64, code int, status string) op {
	return op{Client: client, Kind: "get", Key: key, OrderID: id, Call: call, Return: ret, Code: code, Status: status}
}

func TestLinearizabilityPerKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []op
		ok   bool
	}{
		{"one creator, concurrent replay", []op{
			post(1, "k", "a", 0, 10, 201, "o1", true), post(2, "k", "a", 2, 8, 201, "o1", false)}, true},
		{"retry after no answer, then a replay", []op{
			post(1, "k", "a", 0, -1, 0, "", false), post(1, "k", "a", 20, 30, 201, "o1", true)}, true},
		{"409 while the first is in progress", []op{
			post(1, "k", "a", 0, 10, 201, "o1", false), post(2, "k", "a", 1, 3, 409, "", false)}, true},
		{"another body after the order: 422", []op{
			post(1, "k", "a", 0, 10, 201, "o1", false), post(1, "k", "b", 20, 30, 422, "", false)}, true},
		{"two creators", []op{
			post(1, "k", "a", 0, 10, 201, "o1", false), post(2, "k", "a", 20, 30, 201, "o2", false)}, false},
		{"a replay of another order", []op{
			post(1, "k", "a", 0, 10, 201, "o1", false), post(2, "k", "a", 20, 30, 201, "o2", true)}, false},
		{"a replay before anything was created", []op{
			post(1, "k", "a", 0, 10, 201, "o1", true), post(2, "k", "a", 20, 30, 201, "o1", false)}, false},
		{"another body accepted after the order", []op{
			post(1, "k", "a", 0, 10, 201, "o1", false), post(1, "k", "b", 20, 30, 201, "o9", false)}, false},
		{"422 before anything was created", []op{
			post(1, "k", "b", 0, 5, 422, "", false), post(1, "k", "a", 20, 30, 201, "o1", false)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkLinearizable(tc.h, false, 5*time.Second)
			if got := len(res.Illegal) == 0 && len(res.TimedOut) == 0; got != tc.ok {
				t.Errorf("linearizable = %v, want %v (%+v)", got, tc.ok, res)
			}
		})
	}
}

func TestLinearizabilityPerOrder(t *testing.T) {
	created := post(1, "k", "a", 0, 10, 201, "o1", false)
	for _, tc := range []struct {
		name string
		h    []op
		ok   bool
	}{
		{"pending then confirmed", []op{created,
			get(2, "k", "o1", 11, 12, 200, "PENDING"), get(2, "k", "o1", 13, 14, 200, "CONFIRMED")}, true},
		{"concurrent reads either side of the change", []op{created,
			get(2, "k", "o1", 11, 20, 200, "CONFIRMED"), get(3, "k", "o1", 12, 19, 200, "PENDING")}, true},
		{"a read without an answer", []op{created, get(2, "k", "o1", 11, -1, 0, "")}, true},
		{"not found after the 201", []op{created, get(2, "k", "o1", 11, 12, 404, "")}, false},
		{"back to pending", []op{created,
			get(2, "k", "o1", 11, 12, 200, "CONFIRMED"), get(2, "k", "o1", 13, 14, 200, "PENDING")}, false},
		{"a final status changes", []op{created,
			get(2, "k", "o1", 11, 12, 200, "CANCELLED"), get(2, "k", "o1", 13, 14, 200, "CONFIRMED")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkLinearizable(tc.h, true, 5*time.Second)
			if got := len(res.Illegal) == 0 && len(res.TimedOut) == 0; got != tc.ok {
				t.Errorf("linearizable = %v, want %v (%+v)", got, tc.ok, res)
			}
		})
	}
}
