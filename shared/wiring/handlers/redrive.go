package handlers

import (
	"context"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/wiring/app"
)

// dlqRedrive runs one operator command (console invoke or
// `yc serverless function invoke`): JSON command in, JSON report out (see
// App.Commands.OperateDeadLetters). Every failure is answered with a JSON error
// report naming what is wrong (and whether anything changed); nothing is
// retried by the platform.
func dlqRedrive(ctx context.Context, a *app.App, raw []byte) (any, error) {
	res, err := a.Commands.OperateDeadLetters.Run(ctx, raw)
	if err != nil {
		return redrive.ErrorReport(err), nil
	}
	return res, nil
}
