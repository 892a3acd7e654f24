// Package main is the sagarecovery cloud function: a timer fires it; it
// resends stuck sagas, releases stale idempotency keys, reconciles orders
// with finished sagas and trims the outbox. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/cloudwiring"
	"ordersaga/shared/wiring/handlers"
)

// Handler handles one timer trigger event.
// A self-check event ({"action":"selfcheck"}) gets the self-check report
// (package selfcheck) instead.
func Handler(ctx context.Context, event []byte) (any, error) {
	if selfcheck.Requested(event) {
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "sagarecovery", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return nil, err
	}
	return handlers.SagaRecovery(ctx, a, event)
}
