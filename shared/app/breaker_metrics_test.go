package app_test

import (
	"context"
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

// TestBreakersShowEachDependencysState: the payment breaker is listed
// closed from the start and open once its threshold of failures is reached.
func TestBreakersShowEachDependencysState(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) {
		c.Payment.FailureRate, c.Payment.BreakerThreshold = 1, 2
	})
	got := env.app.Breakers()
	if len(got) != 1 || got[0].Dependency != "payment" || got[0].State != "closed" {
		t.Fatalf("Breakers() at start = %+v, want payment closed", got)
	}
	for i := 0; i < 4; i++ {
		_ = env.app.Payments.Charge(context.Background(), "saga-b", "order-b", 100, "RUB")
	}
	if got := env.app.Breakers(); len(got) != 1 || got[0].State != "open" || got[0].Since.IsZero() {
		t.Fatalf("Breakers() after failures = %+v, want payment open with a time", got)
	}
}
