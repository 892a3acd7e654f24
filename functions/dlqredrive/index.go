// Package main is the dlqredrive cloud function, invoked by operators from
// the console's test tab or with `yc serverless function invoke`: a JSON
// command in (list, show, stats, redrive, discard, purge, ingest), a JSON
// report out. Entry point: index.Handler.
package main

import (
	"context"

	"ordersaga/shared/app"
	"ordersaga/shared/handlers"
)

// Handler runs one command (interface{}: Go 1.16 rules apply to this file
// in the deployment zip).
func Handler(ctx context.Context, event []byte) (interface{}, error) {
	a, err := app.Instance()
	if err != nil {
		return nil, err
	}
	return handlers.DLQRedrive(ctx, a, event)
}
