// Package main is the outboxrelay cloud function: a timer trigger fires it;
// it publishes bounded batches of outbox rows to Message Queue and returns a
// JSON report. Entry point: index.Handler.
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
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "outboxrelay", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return nil, err
	}
	return handlers.OutboxRelay(ctx, a, event)
}
