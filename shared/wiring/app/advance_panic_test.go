package app_test

import (
	"context"
	"fmt"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// A panic while one message of a batch is handled reaches AdvanceSagas'
// caller, as it did when the batch ran one message after another: the
// function hosts (scripts/localcloud/runner's invoke, the plugin host)
// recover a panicking invocation and fail it, so the queue redelivers the
// batch. A panic on a goroutine AdvanceSagas started cannot be recovered by
// anyone and ends the whole process (on the local runner: every function
// and the HTTP API at once).
func TestAdvanceSagasPanicReachesTheCaller(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) { c.Saga.BatchConcurrency = 4 })
	env.stocked("sku-1", 1000)
	for i := 0; i < 3; i++ {
		if r := env.do("POST", "/orders", "dev-user", fmt.Sprintf("panic-%d", i), []byte(orderBody)); r.status != 201 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
	}
	msgs := env.deliveries(3)
	env.beforeAdvancerTx(func() error { panic("step blew up") })

	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = env.app.Commands.AdvanceSagas.Run(context.Background(), "saga-commands", msgs)
	}()
	if got != "step blew up" {
		t.Fatalf("AdvanceSagas' caller recovered %v, want the step's panic", got)
	}
}
