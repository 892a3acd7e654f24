// Package main is the sagarecovery cloud function: a timer fires it; it
// re-drives stuck sagas, releases stale idempotency keys, reconciles orders
// with finished sagas and trims the outbox. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app"
	"ordersaga/shared/cloudwiring"
	"ordersaga/shared/handlers"
	"ordersaga/shared/selfcheck"
	"ordersaga/shared/yc"
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
