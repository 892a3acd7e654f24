// Package outboxdrain is the outbox relay timer's work: publish bounded
// batches of outbox rows until the outbox is drained or the invocation's
// budget is spent, then report the backlog left behind.
package outboxdrain

import (
	"context"
	"time"

	"ordersaga/shared/app/relay"
	"ordersaga/shared/kit/validate"
)

// Relay publishes bounded batches within budget (relay.Relay).
type Relay interface {
	Run(ctx context.Context, budget time.Duration) (relay.Report, error)
}

var _ Relay = (*relay.Relay)(nil)

// Config configures a Job (New).
type Config struct {
	Relay Relay // required
	// OnBacklog, optional, sees each run's report, whatever its error (the
	// outbox_pending and outbox_lag gauges).
	OnBacklog func(relay.Report)
}

// Job drains the outbox. It is built once by New and safe for concurrent
// use.
type Job struct {
	cfg Config
}

// New returns a Job. It fails (apperr.Invalid) without a relay.
func New(cfg Config) (*Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.OnBacklog == nil {
		cfg.OnBacklog = func(relay.Report) {}
	}
	return &Job{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing Relay. Errors are
// apperr.Invalid and name the field.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Relay != nil, "Relay")
	return p.Err("outboxdrain.New")
}

// Run publishes bounded batches of outbox rows until the outbox is drained
// or budget is spent, and reports the backlog. Errors: the relay's.
func (j *Job) Run(ctx context.Context, budget time.Duration) (relay.Report, error) {
	rep, err := j.cfg.Relay.Run(ctx, budget)
	j.cfg.OnBacklog(rep)
	return rep, err
}
