package selfcheck

import "context"

// Checker runs the self-check of any function on one set of adapters. It is
// built once by New and safe for concurrent use.
type Checker struct {
	cfg Config
}

// New returns a Checker reading through cfg; cfg.Function and cfg.Code are
// set per Check. Zero fields take their defaults; a negative CheckTimeout is
// refused (apperr.Invalid, naming the field; see Config.Validate).
func New(cfg Config) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Checker{cfg: cfg}, nil
}

// Check runs every check for function and returns the report (Run).
// versionID is the platform's function version id ("" off the platform).
// It reads only.
func (c *Checker) Check(ctx context.Context, function, versionID string) Report {
	d := c.cfg
	d.Function, d.Code = function, BuildCode(versionID)
	return Run(ctx, d)
}
