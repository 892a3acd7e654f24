package handlers

import (
	"context"

	"ordersaga/shared/app"
	"ordersaga/shared/redrive"
)

// DLQRedrive runs one operator command (console invoke or
// `yc serverless function invoke`): JSON command in, JSON report out. Every
// failure is answered with a JSON error report naming what is wrong (and
// whether anything changed); nothing is retried by the platform.
//
// Before reading or redriving (except in a dry run) it moves what waits in
// the YMQ dead-letter queues into the dead-letter store (ingest, audited), so
// operators see every failure in one place.
func DLQRedrive(ctx context.Context, a *app.App, raw []byte) (any, error) {
	defer a.FlushMetrics(ctx)
	cmd, err := a.Redrive.DecodeCommand(raw)
	if err != nil {
		a.RecordRedrive("invalid", "refused")
		return redrive.ErrorReport(err), nil
	}
	switch cmd.Action {
	case redrive.ActionList, redrive.ActionShow, redrive.ActionStats, redrive.ActionRedrive:
		// A dry run changes nothing, not even this.
		if !cmd.DryRun {
			if _, err := a.Redrive.IngestBeforeRead(ctx, cmd.Actor, 100); err != nil {
				a.Log.Warn("dead-letter queue ingestion failed; showing the store as it is", "error", err)
			}
		}
	}
	res, err := a.Redrive.Execute(ctx, cmd)
	if err != nil {
		a.RecordRedrive(string(cmd.Action), "error")
		return redrive.ErrorReport(err), nil
	}
	a.RecordRedrive(string(cmd.Action), "ok")
	return res, nil
}
