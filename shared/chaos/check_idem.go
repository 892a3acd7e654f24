package chaos

import (
	"net/http"
	"reflect"
)

// idempotency: the same key with the same body always got the same
// response (201, one body, one Location) and exactly one order, made from
// that body; the same key with a different body got 422 and changed
// nothing; no order exists for a key nobody sent.
func (c *checker) idempotency() {
	sent := map[string]bool{}
	for _, k := range c.w.keys {
		sent[k.key] = true
		id, ok := c.orderOf[k.key]
		if !ok {
			c.fail("key %s: no order was created", k.key)
		} else if o := c.s.orders[id]; !reflect.DeepEqual(o.Items, k.req.Items) || o.CustomerID != k.req.CustomerID {
			c.fail("key %s: order %s holds %v, the request asked for %v", k.key, id, o.Items, k.req.Items)
		}
		first := k.replies[0]
		if first.status != http.StatusCreated {
			c.fail("key %s: POST answered %d (retrying 503 and 409 up to %d times): %s", k.key, first.status, maxPostAttempts, first.body)
		} else if ok && first.location != "/orders/"+id {
			c.fail("key %s: Location %q, but the order is %s", k.key, first.location, id)
		}
		for i, r := range k.replies[1:] {
			if r != first {
				c.fail("key %s: POST #%d answered %d %q, the first %d %q", k.key, i+2, r.status, r.body, first.status, first.body)
			}
		}
		if k.probe != nil && k.probe.status != http.StatusUnprocessableEntity {
			c.fail("key %s reused with a different body: answered %d, want 422", k.key, k.probe.status)
		}
	}
	for _, key := range sortedKeys(c.orderOf) {
		if !sent[key] {
			c.fail("order %s exists for key %s, which no client sent", c.orderOf[key], key)
		}
	}
}
