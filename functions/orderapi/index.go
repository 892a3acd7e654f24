// Package main is the orderapi cloud function: API Gateway → POST /orders,
// GET /orders/{id} and the admin routes. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/cloudwiring"
	"ordersaga/shared/wiring/handlers"
)

// Handler serves one API Gateway invocation (payload format 1.0). The raw
// event is taken as bytes so the authorizer context reaches the caller check.
// A self-check event ({"action":"selfcheck"}, from the console's test tab)
// gets the self-check report instead of an HTTP response.
func Handler(ctx context.Context, event []byte) (any, error) {
	if selfcheck.Requested(event) {
		return app.SelfCheckInstance(ctx, cloudwiring.Open, "orderapi", yc.FunctionVersion(ctx)), nil
	}
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return handlers.ColdStartFailed(err), nil
	}
	return handlers.OrderAPI(ctx, a, event)
}
