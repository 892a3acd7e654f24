package selfcheck

import (
	"context"

	"ordersaga/shared/domain/apperr"
)

// Checker runs the self-check of any function on one set of adapters. It is
// built once by New and safe for concurrent use.
type Checker struct {
	deps Deps
}

// New returns a Checker reading through d; d.Function and d.Code are set per
// Check. Zero fields take Run's defaults; a negative CheckTimeout is refused
// (apperr.Invalid).
func New(d Deps) (*Checker, error) {
	if d.CheckTimeout < 0 {
		return nil, apperr.New(apperr.Invalid, "selfcheck.New: CheckTimeout must not be negative (got %s)", d.CheckTimeout)
	}
	return &Checker{deps: d}, nil
}

// Check runs every check for function and returns the report (Run).
// versionID is the platform's function version id ("" off the platform).
// It reads only.
func (c *Checker) Check(ctx context.Context, function, versionID string) Report {
	d := c.deps
	d.Function, d.Code = function, BuildCode(versionID)
	return Run(ctx, d)
}
