// Package main is the orderapi cloud function: API Gateway → POST /orders,
// GET /orders/{id} and the admin routes. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app"
	"ordersaga/shared/cloudwiring"
	"ordersaga/shared/handlers"
	"ordersaga/shared/yc"
)

// Handler serves one API Gateway invocation (payload format 1.0). The raw
// event is taken as bytes so the authorizer context reaches the caller check.
func Handler(ctx context.Context, event []byte) (*yc.HTTPResponse, error) {
	a, err := app.Instance(cloudwiring.Open)
	if err != nil {
		return handlers.ColdStartFailed(err), nil
	}
	return handlers.OrderAPI(ctx, a, event)
}
