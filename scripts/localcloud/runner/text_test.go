package runner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/triggers"
)

// TestRunnerRefusesKeysThatAreNotUTF8: through the local runner's API path
// (request → payload-1.0 event → orderapi), Idempotency-Keys "k\xff" and
// "k\xfe" are refused with 400 problem+json before the event is encoded
// (which would turn both into "k\uFFFD", one key), and so is a body with a
// lone surrogate escape; no key is claimed.
func TestRunnerRefusesKeysThatAreNotUTF8(t *testing.T) {
	f, err := newFaults(config.Default(), &triggers.File{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newFaultApp(t, f)
	rt := &runner{app: a}
	post := func(key string, customer ...string) *httptest.ResponseRecorder {
		c := "c-1"
		if len(customer) > 0 {
			c = customer[0]
		}
		body := `{"customer_id":"` + c + `","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dev-user")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		rt.api(rec, req)
		return rec
	}
	for _, rec := range []*httptest.ResponseRecorder{post("k\xff"), post("k\xfe"), post("k-body", `c\ud800`)} {
		var p map[string]any
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(rec.Body.Bytes(), &p) != nil || p["status"] != float64(400) {
			t.Errorf("%d %s %s, want 400 problem+json", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
	// Nothing was written: "k\uFFFD", the key both would have become, is fresh.
	if rec := post("k\uFFFD"); rec.Code != http.StatusCreated || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("key k\\uFFFD: %d %s, want a fresh 201", rec.Code, rec.Body)
	}
}
