// Package main is the dlqredrive cloud function, invoked by operators from
// the console's test tab or with `yc serverless function invoke`: a JSON
// command in (list, show, stats, redrive, discard, purge, ingest), a JSON
// report out. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/cloudwiring"
	"ordersaga/shared/wiring/handlers"
)

// Handler runs one command.
// A self-check event ({"action":"selfcheck"}) gets the self-check report
// (package selfcheck) instead.
func Handler(ctx context.Context, event []byte) (any, error) {
	if selfcheck.Requested(event) {
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "dlqredrive", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return nil, err
	}
	return handlers.DLQRedrive(ctx, a, event)
}
