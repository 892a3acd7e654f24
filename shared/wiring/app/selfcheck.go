package app

import (
	"context"
	"time"

	"ordersaga/shared/app/selfcheck"
)

// SelfCheckInstance answers a self-check event for a cloud function: the
// report of Instance(open)'s App (Queries.SelfCheck), or, when the cold start fails (a setting
// missing, the database unreachable), a report whose config line fails
// with the cold start's error, so the console shows what to fix instead of
// an opaque invocation error.
func SelfCheckInstance(ctx context.Context, open Opener, function, versionID string) selfcheck.Report {
	a, err := Instance(open)
	if err != nil {
		return selfcheck.ColdStartFailed(function, err, selfcheck.BuildCode(versionID), time.Now().UTC())
	}
	return a.Queries.SelfCheck.Check(ctx, function, versionID)
}
