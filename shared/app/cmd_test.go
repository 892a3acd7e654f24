package app_test

import (
	"strings"
	"testing"

	"ordersaga/shared/app"

	"ordersaga/shared/identity"
	"ordersaga/shared/order"
	"ordersaga/shared/orders"
)

func createCmd(key string) orders.CreateCommand {
	req, err := order.DecodeRequest(strings.NewReader(orderBody))
	if err != nil {
		panic(err)
	}
	return orders.CreateCommand{Caller: identity.Identity{Subject: "dev-user", Role: identity.RoleUser}, Key: key, Request: req}
}

// TestLoadConfigRefusesABreakerThresholdAboveAStepsAttempts: a payment
// breaker that opens only after more failures than process_payment has
// attempts would let a lone order be cancelled before it opens.
func TestLoadConfigRefusesABreakerThresholdAboveAStepsAttempts(t *testing.T) {
	for _, tc := range []struct {
		threshold string
		ok        bool
	}{{"5", true}, {"1", true}, {"6", false}} {
		_, err := app.LoadConfig(func(k string) string {
			if k == "PAYMENT_BREAKER_THRESHOLD" {
				return tc.threshold
			}
			return ""
		})
		if tc.ok && err != nil {
			t.Errorf("threshold %s: %v", tc.threshold, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "PAYMENT_BREAKER_THRESHOLD ("+tc.threshold+") must not exceed the 5 attempts")) {
			t.Errorf("threshold %s: err = %v, want a refusal naming the 5 attempts", tc.threshold, err)
		}
	}
}

// TestLoadConfigRefusesALeaseShorterThanAStep: SAGA_LEASE must exceed the
// longest step timeout of the advancer's table (process_payment's is 10 s).
func TestLoadConfigRefusesALeaseShorterThanAStep(t *testing.T) {
	env := func(k string) string {
		if k == "SAGA_LEASE" {
			return "10s"
		}
		return ""
	}
	_, err := app.LoadConfig(env)
	if err == nil || !strings.Contains(err.Error(), "SAGA_LEASE (10s) must") {
		t.Fatalf("err = %v, want SAGA_LEASE (10s) must ...", err)
	}
	if _, err := app.LoadConfig(func(string) string { return "" }); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}
