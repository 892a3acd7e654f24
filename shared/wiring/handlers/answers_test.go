package handlers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestGatewayAnswersShareOneShape: through the API Gateway event path, a
// created order, a refusal, a malformed event and a failed cold start all
// answer JSON bodies that end in a newline (kept intact by the response
// event's encoding), and every refusal is problem+json of the API's shape
// (an ordersaga problem type, a title and the status).
func TestGatewayAnswersShareOneShape(t *testing.T) {
	s := newSuite(t, nil)
	order := `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
	type answer struct {
		status      int
		ctype, body string
	}
	var cold answer
	r := ColdStartFailed(errors.New("no store"))
	cold.status, cold.ctype, cold.body = r.StatusCode, r.Headers["Content-Type"], r.Body
	answers := map[string]answer{"cold start": cold}
	for name, raw := range map[string][]byte{
		"created":      apiEvent("k-shape", order),
		"cut body":     apiEvent("k-cut", `{"customer_id":`),
		"bad event":    []byte(`{"version":"1.0","httpMethod":1}`),
		"missing auth": []byte(strings.Replace(string(apiEvent("k-auth", order)), `"Authorization":"Bearer dev-user",`, "", 1)),
	} {
		var a answer
		a.status, a.ctype, a.body = s.invokeAPI(raw)
		answers[name] = a
	}
	wantStatus := map[string]int{"created": 201, "cut body": 400, "bad event": 400, "missing auth": 401, "cold start": 503}
	for name, a := range answers {
		if a.status != wantStatus[name] || !strings.HasSuffix(a.body, "}\n") || strings.HasSuffix(a.body, "\n\n") {
			t.Errorf("%s: %d %q, want %d and a JSON body ending in one newline", name, a.status, a.body, wantStatus[name])
			continue
		}
		if a.status < 400 {
			continue
		}
		var p struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Status int    `json:"status"`
			Detail string `json:"detail"`
		}
		if a.ctype != "application/problem+json" || json.Unmarshal([]byte(a.body), &p) != nil ||
			!strings.HasPrefix(p.Type, "urn:ordersaga:problem:") || p.Title == "" || p.Status != a.status || p.Detail == "" {
			t.Errorf("%s: %s %q, want an ordersaga problem of status %d", name, a.ctype, a.body, a.status)
		}
		if strings.Contains(p.Detail, "field  ") {
			t.Errorf("%s: detail %q names an empty field", name, p.Detail)
		}
	}
}
