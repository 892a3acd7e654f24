package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/transport/yc"
)

// admin sends an admin request and fails the test unless it answers 200.
func (s *suite) admin(method, path, body string) map[string]any {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-admin")
	req.Header.Set("Content-Type", "application/json")
	return s.send(req, 200)
}

// pumpOnce is one trigger invocation: it receives up to a batch of saga
// commands, runs sagaadvancer on them and deletes them; it reports how
// many it took.
func (s *suite) pumpOnce(ctx context.Context) (int, error) {
	url := s.app.Config.QueueURLs.SagaCommands
	msgs, err := s.ports.Queue.Receive(ctx, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute})
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	env := make([]yc.QueueMessage, len(msgs))
	for j, m := range msgs {
		env[j] = yc.QueueMessage{MessageID: m.MessageID, Body: m.Body, MessageAttributes: m.Attributes, CreatedAt: m.SentAt}
	}
	raw, err := yc.EncodeQueue("yrn:yc:ymq:ru-central1:test:saga-commands", env)
	if err != nil {
		return 0, err
	}
	if _, err := Registry["sagaadvancer"](ctx, s.app, raw); err != nil {
		return 0, fmt.Errorf("sagaadvancer: %w", err)
	}
	for _, m := range msgs {
		if err := s.ports.Queue.Delete(ctx, url, m.ReceiptHandle); err != nil {
			return 0, err
		}
	}
	return len(msgs), nil
}

// TestShardedHotSKUNeverOversells: 200 orders for the 100 units of one SKU
// spread over 16 sub-rows, placed through the API while four trigger
// invocations advance sagas at once and an operator rebalances the SKU
// twice, confirm exactly 100; the rest are cancelled, and no unit stays
// reserved: the SKU ends with 0 available, 0 reserved and 100 sold.
func TestShardedHotSKUNeverOversells(t *testing.T) {
	const (
		units  = 100
		orders = 200
	)
	s := newSuite(t, nil)
	ctx := context.Background()
	s.admin("PUT", "/admin/stock/hot-1", fmt.Sprintf(`{"available":%d}`, units))
	if st := s.admin("PUT", "/admin/stock/hot-1/shards", `{"shards":16}`); st["shards"] != float64(16) {
		t.Fatalf("set shards: %v", st)
	}

	var (
		placing sync.WaitGroup
		workers sync.WaitGroup
		mu      sync.Mutex
		failed  []error
		ids     = make([]string, orders)
		done    = make(chan struct{})
	)
	fail := func(err error) {
		mu.Lock()
		failed = append(failed, err)
		mu.Unlock()
	}
	for w := 0; w < 4; w++ { // the trigger's concurrent invocations
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				n, err := s.pumpOnce(ctx)
				if err != nil {
					fail(err)
					return
				}
				if n == 0 {
					select {
					case <-done:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}
		}()
	}
	for c := 0; c < 8; c++ { // the customers
		placing.Add(1)
		go func() {
			defer placing.Done()
			for i := c; i < orders; i += 8 {
				body := `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"hot-1","quantity":1,"unit_price_minor":100}]}`
				req, _ := http.NewRequest("POST", s.srv.URL+"/orders", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer dev-user")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("hot-%d", i))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					fail(err)
					return
				}
				var o struct {
					ID string `json:"id"`
				}
				err = decodeJSON(resp, &o)
				if err != nil || resp.StatusCode != 201 {
					fail(fmt.Errorf("order %d: %d %v", i, resp.StatusCode, err))
					return
				}
				ids[i] = o.ID
			}
		}()
	}
	for i := 0; i < 2; i++ { // the operator, during the burst
		time.Sleep(20 * time.Millisecond)
		s.admin("POST", "/admin/stock/hot-1/rebalance", ``)
	}
	placing.Wait()
	close(done)
	workers.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d failures, first: %v", len(failed), failed[0])
	}
	s.pump() // anything left

	status := map[string]int{}
	for _, id := range ids {
		status[s.get("/orders/" + id)["status"].(string)]++
	}
	if status["CONFIRMED"] != units || status["CANCELLED"] != orders-units {
		t.Errorf("orders by status %v, want %d CONFIRMED and %d CANCELLED", status, units, orders-units)
	}
	st := s.admin("GET", "/admin/stock", "")["stock"].([]any)
	var hot map[string]any
	for _, x := range st {
		if m := x.(map[string]any); m["sku"] == "hot-1" {
			hot = m
		}
	}
	if hot["available"] != float64(0) || hot["reserved"] != float64(0) || hot["sold"] != float64(units) || hot["shards"] != float64(16) {
		t.Errorf("hot-1 after the sale: %v, want 0 available, 0 reserved, %d sold over 16 sub-rows", hot, units)
	}
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
