// Package main is the sagaadvancer cloud function: the Message Queue trigger
// on saga-commands fires it with a batch; each message advances its saga by
// exactly one step or compensation. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/cloudwiring"
	"ordersaga/shared/wiring/handlers"
)

// Handler handles one trigger batch. An error returns the whole batch to the
// queue (see handlers.SagaAdvancer for when that happens).
// A self-check event ({"action":"selfcheck"}) gets the self-check report
// (package selfcheck) instead.
func Handler(ctx context.Context, event []byte) (any, error) {
	if selfcheck.Requested(event) {
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "sagaadvancer", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return nil, err
	}
	return handlers.SagaAdvancer(ctx, a, event)
}
