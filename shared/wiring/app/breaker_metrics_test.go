package app_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
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

// TestBreakerThresholdAboveAStepsAttemptsIsWarned: a payment breaker that
// opens only after more failures than process_payment has attempts lets a
// lone order be cancelled before it opens; the app starts (a test may want
// the breaker closed) but says so at warn.
func TestBreakerThresholdAboveAStepsAttemptsIsWarned(t *testing.T) {
	for _, tc := range []struct {
		threshold int
		warned    bool
	}{{5, false}, {6, true}} {
		sink := &logSink{}
		newTestEnv(t, func(c *config.Config, o *app.Options) {
			c.Payment.BreakerThreshold = tc.threshold
			o.Log = app.NewLogger(sink, "warn")
		})
		got := withMsg(sink.lines(t), "payment breaker threshold delays the breaker for a lone order")
		if (len(got) > 0) != tc.warned {
			t.Errorf("threshold %d: warnings %v, want warned %v", tc.threshold, got, tc.warned)
		}
		if tc.warned && len(got) > 0 && !strings.Contains(fmt.Sprint(got[0]["error"]), "exceeds the 5 attempts") {
			t.Errorf("threshold %d: warning %v does not name the 5 attempts", tc.threshold, got[0])
		}
	}
}

// TestBreakersShowEachDependencysState: the payment breaker is listed
// closed from the start and open once its threshold of failures is reached.
func TestBreakersShowEachDependencysState(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) {
		c.Payment.FailureRate, c.Payment.BreakerThreshold = 1, 2
	})
	got := env.app.Queries.Breakers.List()
	if len(got) != 1 || got[0].Dependency != "payment" || got[0].State != "closed" {
		t.Fatalf("Breakers() at start = %+v, want payment closed", got)
	}
	for i := 0; i < 4; i++ {
		_ = env.app.Commands.Payments.Charge(context.Background(), "saga-b", "order-b", 100, "RUB")
	}
	if got := env.app.Queries.Breakers.List(); len(got) != 1 || got[0].State != "open" || got[0].Since.IsZero() {
		t.Fatalf("Breakers() after failures = %+v, want payment open with a time", got)
	}
}
