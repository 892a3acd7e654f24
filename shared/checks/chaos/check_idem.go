package chaos

import (
	"net/http"
	"ordersaga/shared/kit/text"
	"reflect"
)

// idempotency: the same key with the same body always got the same
// response (201, one body, one Location) and exactly one order, made from
// that body; the same key with a different body got 422 and changed
// nothing; no order exists for a key nobody sent.
func (c *checker) idempotency() {
	sent := map[string]bool{}
	for _, k := range c.w.keys {
		if k == nil {
			continue // never placed (the run ended early)
		}
		sent[k.key] = true
		first := k.replies[0]
		id, ok := c.orderOf[k.key]
		if k.unicode && first.status != http.StatusCreated && first.status != http.StatusBadRequest {
			c.fail("key %q: a request with Unicode text answered %d, want 201 or a clean 400: %s", k.key, first.status, text.Clip(first.body, 200))
		}
		if k.refused {
			if ok {
				c.fail("key %q was refused with 400, but order %s exists", k.key, id)
			}
			for i, r := range k.replies[1:] {
				if r != first {
					c.fail("key %q: POST #%d answered %d, the first was refused with 400", k.key, i+2, r.status)
				}
			}
			continue
		}
		if !ok {
			c.fail("key %q: no order was created", k.key)
		} else if o := c.s.orders[id]; !reflect.DeepEqual(o.Items, k.req.Items) || o.CustomerID != k.req.CustomerID || o.Currency != k.req.Currency {
			c.fail("key %q: order %s holds %q %s %v, the request asked for %q %s %v", k.key, id,
				o.CustomerID, o.Currency, o.Items, k.req.CustomerID, k.req.Currency, k.req.Items)
		}
		if first.status != http.StatusCreated {
			c.fail("key %q: POST answered %d (retrying 503 and 409 up to %d times): %s", k.key, first.status, maxPostAttempts, first.body)
		} else if ok && first.location != "/orders/"+id {
			c.fail("key %q: Location %q, but the order is %s", k.key, first.location, id)
		}
		for i, r := range k.replies[1:] {
			if r != first {
				c.fail("key %q: POST #%d answered %d %q, the first %d %q", k.key, i+2, r.status, r.body, first.status, first.body)
			}
		}
		if k.probe != nil && k.probe.status != http.StatusUnprocessableEntity {
			c.fail("key %q reused with a different body: answered %d, want 422", k.key, k.probe.status)
		}
	}
	for _, key := range sortedKeys(c.orderOf) {
		if !sent[key] {
			c.fail("order %s exists for key %q, which no client sent", c.orderOf[key], key)
		}
	}
}
