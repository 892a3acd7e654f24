package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/wiring/app"
)

// keyRun is one idempotency key as the client used it.
type keyRun struct {
	key  string
	req  order.Request
	body []byte
	// replies are the final answers to every POST of body under key
	// (after the client's retries of 503 and 409).
	replies []reply
	// probe is the answer to the same key with a different body (nil if
	// the key was not reused so).
	probe *reply
	// unicode marks a request with random Unicode in its text fields: the
	// API may refuse it with 400 (refused is then set), and req is what a
	// conforming JSON parser reads from body.
	unicode, refused bool
}

// reply is one HTTP answer.
type reply struct {
	status   int
	body     string
	location string
}

// maxPostAttempts bounds the client's retries of one POST.
const maxPostAttempts = 30

// skus and their weights in the workload: sku-a is plentiful, sku-b and
// sku-c run out during the run, sku-out never had stock.
var skus = []struct {
	sku    string
	weight float64
}{{"sku-a", 0.50}, {"sku-b", 0.30}, {"sku-c", 0.17}, {"sku-out", 0.03}}

// newRequest draws order i from the workload stream: 1–3 lines (distinct
// SKUs) of 1–3 units; about 8% of orders carry a unit price above the
// decline limit.
func (w *world) newRequest(i int) order.Request {
	req := order.Request{CustomerID: fmt.Sprintf("cust-%03d", i%97), Currency: "RUB"}
	big := w.wl.Float64() < 0.08
	used := map[string]bool{}
	for j, n := 0, 1+w.wl.IntN(3); j < n; j++ {
		r, sku := w.wl.Float64(), skus[len(skus)-1].sku
		for _, s := range skus {
			if r < s.weight {
				sku = s.sku
				break
			}
			r -= s.weight
		}
		it := order.Item{SKU: sku, Quantity: 1 + w.wl.Int64N(3), UnitPriceMinor: 100 + w.wl.Int64N(100_000)}
		if used[sku] {
			continue // one line per SKU (the API refuses repeats)
		}
		used[sku] = true
		if big && len(req.Items) == 0 {
			it.UnitPriceMinor = w.cfg.Payment.DeclineAbove + 1 + w.wl.Int64N(1000)
		}
		req.Items = append(req.Items, it)
	}
	return req
}

// placeOrder sends order i: once, or 2–4 times at once with the same key;
// a reused key is then sent once more with the same body and once with a
// different one.
func (w *world) placeOrder(ctx context.Context, a *app.App, i int) error {
	req := w.newRequest(i)
	key := fmt.Sprintf("order-%06d", i)
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("chaos: encode order: %w", err)
	}
	k := &keyRun{key: key, req: req, body: body}
	if w.opts.Unicode && w.wl.Float64() < unicodeShare {
		k.unicode = true
		k.key, k.body, k.req = w.unicodeRequest(key, req)
		body = k.body
	}
	w.mu.Lock()
	w.keys[i] = k
	w.mu.Unlock()
	dup := w.wl.Float64() < w.faults.DuplicatePost
	copies := 2 + w.wl.IntN(3)
	mismatch := w.wl.Float64() < w.faults.MismatchedPost
	seq := !w.opts.Concurrent
	if !dup {
		k.replies = append(k.replies, w.post(ctx, a, k.key, body, seq))
	} else {
		// Concurrent copies: in a sequential run injection pauses so that
		// no random draw depends on which goroutine runs first.
		if seq {
			w.in.set(false)
		}
		replies := make([]reply, copies)
		var wg sync.WaitGroup
		for c := range replies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[c] = w.post(ctx, a, k.key, body, false)
			}()
		}
		wg.Wait()
		if seq {
			w.in.set(true)
		}
		k.replies = append(k.replies, replies...)
	}
	if k.unicode && k.replies[0].status == http.StatusBadRequest {
		k.refused = true
		w.refused.Add(1)
		return ctx.Err() // refused: nothing to reuse
	}
	if dup || mismatch {
		if seq {
			w.clock.Advance(time.Duration(w.wl.IntN(3000)) * time.Millisecond)
		}
		k.replies = append(k.replies, w.post(ctx, a, k.key, body, seq))
	}
	if mismatch {
		alt := req
		alt.Items = append([]order.Item(nil), req.Items...)
		alt.Items[0].Quantity++
		altBody, err := json.Marshal(alt)
		if err != nil {
			return fmt.Errorf("chaos: encode order: %w", err)
		}
		p := w.post(ctx, a, k.key, altBody, seq)
		k.probe = &p
	}
	return ctx.Err()
}

// post sends one POST /orders through an App's HTTP handler (in process)
// and retries 503 and 409 as a client honouring Retry-After would; with
// advance it moves the clock by the Retry-After second first (in a
// concurrent run the clock driver moves it: the client pauses briefly).
func (w *world) post(ctx context.Context, a *app.App, key string, body []byte, advance bool) reply {
	var last reply
	for attempt := 0; attempt < maxPostAttempts; attempt++ {
		req := httptest.NewRequest(http.MethodPost, "/orders", bytes.NewReader(body)).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer dev-user")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		a.HTTP.ServeHTTP(rec, req)
		w.requests.Add(1)
		last = reply{status: rec.Code, body: rec.Body.String(), location: rec.Header().Get("Location")}
		if rec.Code != http.StatusServiceUnavailable && rec.Code != http.StatusConflict {
			return last
		}
		w.retries.add(fmt.Sprintf("http_%d_retried", rec.Code), 1)
		if advance {
			w.clock.Advance(time.Second)
		} else if w.opts.Concurrent {
			time.Sleep(time.Millisecond)
		}
	}
	return last
}
