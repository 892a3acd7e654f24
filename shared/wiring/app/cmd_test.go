package app_test

import (
	"strings"
	"testing"

	"ordersaga/shared/wiring/app"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/transport/identity"
)

func createCmd(key string) orders.CreateCommand {
	req, err := order.DecodeRequest(strings.NewReader(orderBody))
	if err != nil {
		panic(err)
	}
	return orders.CreateCommand{Caller: identity.Identity{Subject: "dev-user", Role: identity.RoleUser}, Key: key, Request: req}
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
