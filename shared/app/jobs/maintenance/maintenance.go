// Package maintenance is the recovery timer's work: resend stuck sagas,
// release stale keys and reconcile orders (orchestrator.Recovery), trim the
// outbox, move the queue's dead letters into the dead-letter store, resolve
// those whose saga has finished, and count what stays open.
package maintenance

import (
	"context"
	"log/slog"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Limits of one run. Each job does a bounded amount of work so the run
// ends well within the timer function's deadline; what is left is taken by
// the next firing.
const (
	// DefaultPurgeLimit bounds the published outbox rows one run deletes, in
	// one transaction: a backlog of rows past retention (after the runner
	// was stopped for days) is trimmed over several runs instead of holding
	// SQLite's write lock for one long delete. YDB expires the rows by TTL
	// and deletes nothing here.
	DefaultPurgeLimit = 1000
	// DefaultDeadLetterLimit bounds the messages moved from the dead-letter
	// queues, and the open entries looked at per source for resolution, in
	// one run (redrive.DefaultMax).
	DefaultDeadLetterLimit = redrive.DefaultMax
	// countPageSize and countMaxPages bound the open dead letters counted
	// per source for the dlq_size gauge: at most 5 000 entries read through
	// the status index, so resolved history (the bulk of the table) is never
	// read; a count at the bound means "at least".
	countPageSize, countMaxPages = 1000, 5
	// sagaDLQ is the name the saga-commands dead-letter queue's depth is
	// reported under.
	sagaDLQ = "saga-commands-dlq"
)

// Recoverer runs one saga recovery pass (orchestrator.Recovery).
type Recoverer interface {
	Run(ctx context.Context) (orchestrator.Report, error)
}

// DeadLetters moves queue dead letters into the store and resolves those
// whose saga has finished (redrive.Service); each looks at up to max.
type DeadLetters interface {
	Ingest(ctx context.Context, max int) (int, error)
	ResolveFinished(ctx context.Context, max int) (int, error)
}

var (
	_ Recoverer   = (*orchestrator.Recovery)(nil)
	_ DeadLetters = (*redrive.Service)(nil)
)

// Config configures a Job (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	Recovery    Recoverer   // required
	DeadLetters DeadLetters // required
	Store       store.Store // required
	// Queue and SagaDLQURL, both optional, report the saga-commands
	// dead-letter queue's depth (messages not yet ingested).
	Queue      queue.Queue
	SagaDLQURL string
	// Retention is how long published outbox rows are kept (default
	// config.DefaultOutboxRetention, OUTBOX_RETENTION).
	Retention time.Duration
	// PurgeLimit (default DefaultPurgeLimit) and DeadLetterLimit (default
	// DefaultDeadLetterLimit) bound one run's work.
	PurgeLimit      int
	DeadLetterLimit int
	Now             func() time.Time // default time.Now, read in UTC
	Log             *slog.Logger     // default slog.Default()
	// OnRecovery, optional, sees each saga recovery report (metrics).
	OnRecovery func(orchestrator.Report)
	// OnDeadLetterSize, optional, sets the dlq_size gauge of a source or a
	// dead-letter queue.
	OnDeadLetterSize func(queue string, n int)
}

// Job runs the maintenance. It is built once by New and safe for
// concurrent use.
type Job struct {
	cfg Config
}

// New returns a Job with cfg's zero fields set to their defaults. It fails
// (apperr.Invalid) when a required port is missing or a setting is
// negative.
func New(cfg Config) (*Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Job{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing Recovery, DeadLetters
// or Store, a negative Retention, PurgeLimit or DeadLetterLimit. Errors are
// apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Recovery != nil, "Recovery")
	p.Require(c.DeadLetters != nil, "DeadLetters")
	p.Require(c.Store != nil, "Store")
	validate.NotNegative(&p, "Retention", c.Retention)
	validate.NotNegative(&p, "PurgeLimit", c.PurgeLimit)
	validate.NotNegative(&p, "DeadLetterLimit", c.DeadLetterLimit)
	return p.Err("maintenance.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Retention == 0 {
		c.Retention = config.DefaultOutboxRetention
	}
	if c.PurgeLimit == 0 {
		c.PurgeLimit = DefaultPurgeLimit
	}
	if c.DeadLetterLimit == 0 {
		c.DeadLetterLimit = DefaultDeadLetterLimit
	}
	c.Now = config.UTCClock(c.Now)
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.OnRecovery == nil {
		c.OnRecovery = func(orchestrator.Report) {}
	}
	if c.OnDeadLetterSize == nil {
		c.OnDeadLetterSize = func(string, int) {}
	}
}

// Report is the result of one maintenance run.
type Report struct {
	orchestrator.Report
	OutboxPurged int `json:"outbox_purged"`
	// DLQIngested messages moved from the YMQ dead-letter queues into the
	// dead-letter store; DeadLettersResolved queue entries whose saga had
	// finished meanwhile (kept, marked resolved by "system").
	DLQIngested         int `json:"dlq_ingested"`
	DeadLettersResolved int `json:"dead_letters_resolved"`
}

// idle reports whether the run found nothing to do.
func (r Report) idle() bool {
	o := r.Report
	return o.DueSagas == 0 && o.Resent == 0 && o.KeysReleased == 0 && o.InboxDeleted == 0 &&
		o.Reconciled == 0 && o.Errors == 0 && r.OutboxPurged == 0 && r.DLQIngested == 0 && r.DeadLettersResolved == 0
}

// Run is one maintenance run of the recovery timer: resend stuck sagas,
// release stale keys, reconcile orders (Recovery), delete published outbox
// rows past retention, move what the YMQ dead-letter queue holds into the
// dead-letter store (so dlq_size and the DLQ-growth alert see it), resolve
// entries whose saga has finished meanwhile, then refresh the dead-letter
// gauges. It logs one summary, at debug when the run found nothing to do.
//
// Every job runs even when an earlier one failed (one saga that cannot be
// repaired must not blind the DLQ ingestion and its alert). The returned
// error is the saga recovery's; the later jobs' failures are logged, and
// retried by the next run.
func (j *Job) Run(ctx context.Context) (Report, error) {
	log := j.cfg.Log
	rep, recErr := j.cfg.Recovery.Run(ctx)
	j.cfg.OnRecovery(rep)
	out := Report{Report: rep}
	var err error
	if out.OutboxPurged, err = j.purgeOutbox(ctx); err != nil {
		log.Warn("outbox retention cleanup failed", "error", err)
	}
	if out.DLQIngested, err = j.cfg.DeadLetters.Ingest(ctx, j.cfg.DeadLetterLimit); err != nil {
		log.Warn("dead-letter queue ingestion failed", "error", err)
	}
	if out.DeadLettersResolved, err = j.cfg.DeadLetters.ResolveFinished(ctx, j.cfg.DeadLetterLimit); err != nil {
		log.Warn("resolving dead letters of finished sagas failed", "error", err)
	}
	j.countDeadLetters(ctx)
	if recErr != nil {
		log.Error("saga recovery finished with errors", "error", recErr, "report", out)
		return out, recErr
	}
	// An idle run (the timer fires every few seconds locally) logs at debug.
	lvl := slog.LevelInfo
	if out.idle() {
		lvl = slog.LevelDebug
	}
	log.Log(ctx, lvl, "saga recovery", "due_sagas", rep.DueSagas, "resent", rep.Resent,
		"keys_released", rep.KeysReleased, "inbox_deleted", rep.InboxDeleted,
		"reconcile_checked", rep.ReconcileChecked, "reconciled", rep.Reconciled,
		"outbox_purged", out.OutboxPurged, "dlq_ingested", out.DLQIngested,
		"dead_letters_resolved", out.DeadLettersResolved, "errors", rep.Errors)
	return out, nil
}

// purgeOutbox deletes up to PurgeLimit published outbox rows older than
// the retention.
func (j *Job) purgeOutbox(ctx context.Context) (int, error) {
	cutoff := j.cfg.Now().Add(-j.cfg.Retention)
	n := 0
	err := j.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.DeletePublishedOutbox(ctx, cutoff, j.cfg.PurgeLimit)
		return err
	})
	return n, err
}

// countDeadLetters reports the open entries of each dead-letter source and
// the messages waiting in the saga-commands dead-letter queue (not yet
// ingested). It reads only open entries, through the status index, a
// bounded number of pages: resolved and discarded history (the bulk of the
// table) is never read on the timer's path. A count at the bound means "at
// least". A source whose count fails is logged and left unreported.
func (j *Job) countDeadLetters(ctx context.Context) {
	for _, src := range []dlq.Source{dlq.SourceQueue, dlq.SourceOutbox, dlq.SourceSaga} {
		n, cursor := 0, ""
		err := j.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
			for page := 0; page < countMaxPages; page++ {
				list, next, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: src, Status: dlq.StatusOpen}, dlq.Page{Limit: countPageSize, Cursor: cursor})
				if err != nil {
					return err
				}
				n += len(list)
				if cursor = next; cursor == "" {
					return nil
				}
			}
			return nil
		})
		if err != nil {
			j.cfg.Log.Warn("counting open dead letters failed", "source", src, "error", err)
			continue
		}
		j.cfg.OnDeadLetterSize(string(src), n)
	}
	if j.cfg.Queue != nil && j.cfg.SagaDLQURL != "" {
		if visible, inFlight, err := j.cfg.Queue.Depth(ctx, j.cfg.SagaDLQURL); err == nil {
			j.cfg.OnDeadLetterSize(sagaDLQ, visible+inFlight)
		}
	}
}
