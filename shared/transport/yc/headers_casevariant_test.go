package yc

import (
	"context"
	"testing"
)

// TestCaseVariantSingleHeadersAreNotDroppedAtRandom: HTTP header
// names are case-insensitive, and the event's single-value "headers" map
// may hold two spellings of one name (a client sent both; nothing in the
// platform docs promises they are merged). ToHTTPRequest keeps whichever
// spelling Go's map iteration visits first and silently drops the other,
// so the same event yields Idempotency-Key "k1" on one invocation and "k2"
// on another: a retried request can create a second order, and the
// handler's "send exactly one Idempotency-Key header" refusal never sees
// the second value. Both values must reach the request (then the handler
// refuses), or the event must be refused.
func TestCaseVariantSingleHeadersAreNotDroppedAtRandom(t *testing.T) {
	ev := HTTPRequest{HTTPMethod: "POST", Path: "/orders", Headers: map[string]string{
		"idempotency-key": "k1", "Idempotency-Key": "k2", "IDEMPOTENCY-KEY": "k3",
	}}
	seen := map[string]int{}
	for i := 0; i < 200; i++ {
		r, err := ToHTTPRequest(context.Background(), ev)
		if err != nil {
			return // refusing the event is a fix too
		}
		vals := r.Header.Values("Idempotency-Key")
		if len(vals) == 3 {
			return // all kept: the handler refuses more than one
		}
		for _, v := range vals {
			seen[v]++
		}
	}
	t.Errorf("one event gave the Idempotency-Key values %v over 200 conversions (want all three kept, or a refusal)", seen)
}
