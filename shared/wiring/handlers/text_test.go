package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// orderBody is a valid order whose customer_id is the JSON string literal
// customer (already escaped as JSON).
func orderBody(customer string) string {
	return `{"customer_id":"` + customer + `","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
}

// apiEvent is an API Gateway event (payload format 1.0) for POST /orders,
// built byte by byte so that key may hold bytes that are not UTF-8 and body
// may hold any escape, exactly as the gateway would put them in the event.
func apiEvent(key, body string) []byte {
	return []byte(`{"version":"1.0","resource":"/orders","path":"/orders","httpMethod":"POST",` +
		`"headers":{"Authorization":"Bearer dev-user","Content-Type":"application/json","Idempotency-Key":"` + key + `"},` +
		`"requestContext":{"requestId":"req-1","identity":{"sourceIp":"203.0.113.1"}},` +
		`"body":` + strconv.Quote(body) + `,"isBase64Encoded":false}`)
}

// invokeAPI runs the orderapi function with raw and returns its status,
// Content-Type and body.
func (s *suite) invokeAPI(raw []byte) (int, string, string) {
	s.t.Helper()
	out, err := Registry["orderapi"](context.Background(), s.app, raw)
	if err != nil {
		s.t.Fatalf("orderapi: %v", err)
	}
	b, _ := json.Marshal(out)
	var resp struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, resp.Headers["Content-Type"], resp.Body
}

// postRaw sends POST /orders through the real HTTP server with the header
// value and body as given (bytes that are not UTF-8 included).
func (s *suite) postRaw(key, body string) (int, string, string) {
	s.t.Helper()
	req, _ := http.NewRequest("POST", s.srv.URL+"/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-user")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestTextIsRefusedNotRewritten: an Idempotency-Key with bytes that are not
// UTF-8 ("k\xff", "k\xfe") and a body with the escape of a lone surrogate
// ("c\ud800") are refused with 400 problem+json, through the real HTTP
// handler and through the API Gateway event, and change nothing: the key
// and the customer id they would have been rewritten to (with U+FFFD) are
// still free afterwards.
func TestTextIsRefusedNotRewritten(t *testing.T) {
	s := newSuite(t, nil)
	refused := []struct {
		name      string
		key, body string
	}{
		{"key with 0xff", "k\xff", orderBody("c-1")},
		{"key with 0xfe", "k\xfe", orderBody("c-1")},
		{"body with a lone surrogate", "k-body", orderBody(`c\ud800`)},
		{"body with a lone low surrogate", "k-body-2", orderBody(`c\udc00`)},
	}
	check := func(t *testing.T, via string, status int, ct, body string) {
		t.Helper()
		if status != http.StatusBadRequest || ct != "application/problem+json" {
			t.Fatalf("%s: %d %s %s, want 400 problem+json", via, status, ct, body)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(body), &p); err != nil || p["status"] != float64(400) || p["detail"] == "" {
			t.Errorf("%s: problem %s (%v)", via, body, err)
		}
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			status, ct, body := s.postRaw(c.key, c.body)
			check(t, "HTTP", status, ct, body)
			status, ct, body = s.invokeAPI(apiEvent(c.key, c.body))
			check(t, "event", status, ct, body)
		})
	}
	// A lone surrogate escaped in the event itself (not in the body's JSON).
	status, ct, body := s.invokeAPI(apiEvent(`k\ud800`, orderBody("c-1")))
	check(t, "event key escape", status, ct, body)

	// Nothing was written: "k\uFFFD", the key the refused ones would have
	// become, is fresh (201, not a replay), and so is customer "c\uFFFD".
	status, ct, body = s.invokeAPI(apiEvent("k\uFFFD", orderBody("c\uFFFD")))
	if status != http.StatusCreated || strings.Contains(ct, "problem") {
		t.Fatalf("key k\uFFFD: %d %s, want a fresh 201", status, body)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	s.pump()
	got := s.get("/orders/" + created["id"].(string))
	if got["customer_id"] != "c\uFFFD" || got["status"] != "CONFIRMED" {
		t.Errorf("order %v", got)
	}
	var st inventory.Stock
	err := s.ports.Store.View(context.Background(), func(ctx context.Context, tx store.Tx) (err error) {
		st, err = tx.GetStock(ctx, "sku-1")
		return err
	})
	if err != nil || st.Sold != 1 || st.Reserved != 0 {
		t.Errorf("stock %+v (%v): only the accepted order may have taken a unit", st, err)
	}
}
