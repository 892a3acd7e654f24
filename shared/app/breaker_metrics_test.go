package app_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"ordersaga/shared/app"
	"ordersaga/shared/config"
)

// TestBreakerSeriesExistFromTheStart: the payment breaker's state gauge
// (0 = closed) and its transition counters are exported as soon as the app
// is built, before any transition.
func TestBreakerSeriesExistFromTheStart(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) { c.Metrics = "prometheus" })
	if env.ports.MetricsHandler == nil {
		t.Fatal("the local wiring with ORDERSAGA_METRICS=prometheus serves no /metrics")
	}
	rec := httptest.NewRecorder()
	env.ports.MetricsHandler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`breaker_state{dependency="payment"} 0`, `breaker_transitions_total{dependency="payment",from="closed",to="open"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
