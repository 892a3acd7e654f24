// Package dlqoperator runs one operator command on the dead letters (the
// dlqredrive function: a console invoke or `yc serverless function
// invoke`): decode it, bring the queues' dead letters into the store before
// a read, execute it through redrive.Service, and count it.
package dlqoperator

import (
	"context"
	"log/slog"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/kit/validate"
)

// DefaultIngestLimit bounds the messages moved from the dead-letter queues
// before one read (redrive.DefaultMax), so a command answers within the
// function's deadline however full the queues are.
const DefaultIngestLimit = redrive.DefaultMax

// DeadLetters is the operator's dead-letter use case (redrive.Service).
type DeadLetters interface {
	DecodeCommand(raw []byte) (redrive.Command, error)
	IngestBeforeRead(ctx context.Context, actor string, max int) (int, error)
	Execute(ctx context.Context, cmd redrive.Command) (any, error)
}

var _ DeadLetters = (*redrive.Service)(nil)

// Config configures a Job (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	DeadLetters DeadLetters // required
	// IngestLimit bounds the ingest before a read (default
	// DefaultIngestLimit).
	IngestLimit int
	Log         *slog.Logger // default slog.Default()
	// OnAction, optional, counts each command by action and outcome
	// ("ok", "error", or action "invalid" with outcome "refused").
	OnAction func(action, outcome string)
}

// Job runs operator commands. It is built once by New and safe for
// concurrent use.
type Job struct {
	cfg Config
}

// New returns a Job with cfg's zero fields set to their defaults. It fails
// (apperr.Invalid) without the dead-letter use case or with a negative
// limit.
func New(cfg Config) (*Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Job{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing DeadLetters or a
// negative IngestLimit. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.DeadLetters != nil, "DeadLetters")
	validate.NotNegative(&p, "IngestLimit", c.IngestLimit)
	return p.Err("dlqoperator.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.IngestLimit == 0 {
		c.IngestLimit = DefaultIngestLimit
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.OnAction == nil {
		c.OnAction = func(string, string) {}
	}
}

// Run runs one operator command (JSON, as the dlqredrive function receives
// it) and counts it by action and outcome. Before reading or redriving
// (except in a dry run) it moves what waits in the YMQ dead-letter queues
// into the dead-letter store (ingest, audited), so operators see every
// failure in one place. A malformed command changes nothing; any error is
// the operator's answer (redrive.ErrorReport).
func (j *Job) Run(ctx context.Context, raw []byte) (any, error) {
	dl := j.cfg.DeadLetters
	cmd, err := dl.DecodeCommand(raw)
	if err != nil {
		j.cfg.OnAction("invalid", "refused")
		return nil, err
	}
	switch cmd.Action {
	case redrive.ActionList, redrive.ActionShow, redrive.ActionStats, redrive.ActionRedrive:
		// A dry run changes nothing, not even this.
		if !cmd.DryRun {
			if _, err := dl.IngestBeforeRead(ctx, cmd.Actor, j.cfg.IngestLimit); err != nil {
				j.cfg.Log.Warn("dead-letter queue ingestion failed; showing the store as it is", "error", err)
			}
		}
	}
	res, err := dl.Execute(ctx, cmd)
	if err != nil {
		j.cfg.OnAction(string(cmd.Action), "error")
		return nil, err
	}
	j.cfg.OnAction(string(cmd.Action), "ok")
	return res, nil
}
