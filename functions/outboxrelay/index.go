// Package main is the outboxrelay cloud function: a timer trigger fires it;
// it publishes bounded batches of outbox rows to Message Queue and returns a
// JSON report. Entry point: index.Handler.
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
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "outboxrelay", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return nil, err
	}
	return handlers.OutboxRelay(ctx, a, event)
}
