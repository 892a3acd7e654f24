package app

import (
	"context"
	"time"

	"ordersaga/shared/app/selfcheck"
)

// SelfCheck runs the self-check of function on this App's adapters (package
// selfcheck): configuration, a store read, each configured queue's
// attributes, the clock skew against the database and the schema version.
// It reads only. versionID is the platform's function version id ("" off
// the platform).
func (a *App) SelfCheck(ctx context.Context, function, versionID string) selfcheck.Report {
	return selfcheck.Run(ctx, selfcheck.Config{
		Function: function, Config: a.Config, Store: a.store, Queue: a.queue, Database: a.probe,
		Now: a.Now, Code: selfcheck.BuildCode(versionID),
	})
}

// SelfCheckInstance answers a self-check event for a cloud function: the
// report of Instance(open)'s App, or, when the cold start fails (a setting
// missing, the database unreachable), a report whose config line fails
// with the cold start's error, so the console shows what to fix instead of
// an opaque invocation error.
func SelfCheckInstance(ctx context.Context, open Opener, function, versionID string) selfcheck.Report {
	a, err := Instance(open)
	if err != nil {
		return selfcheck.ColdStartFailed(function, err, selfcheck.BuildCode(versionID), time.Now().UTC())
	}
	return a.SelfCheck(ctx, function, versionID)
}
