package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Recovery is the timer-driven safety net. One Run does a bounded amount of
// each job: resend stuck sagas, release abandoned idempotency keys, delete
// expired inbox entries, and reconcile orders with their finished sagas.
// It is built once by NewRecovery; safe for concurrent use (concurrent
// runs only race on conditional writes, and the loser skips the row).
type Recovery struct {
	c   RecoveryConfig
	out outboxwrite.Writer
}

// RecoveryConfig configures a Recovery. Store is required; every other
// zero field takes its default (the Default* constants; those that have a
// setting are config.Default()'s).
type RecoveryConfig struct {
	Store store.Store
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID makes outbox ids (default: random 128-bit hex).
	NewID func() string
	// StuckAfter is how long past its due time an idle saga (no lease) must
	// be before it is resent (default DefaultStuckAfter): long enough
	// for a message in a healthy queue to arrive first, short enough that
	// a message held by a consumer that died costs little. A saga whose
	// lease lapsed is resent without this wait.
	StuckAfter time.Duration
	// MaxResends is how many resends in a row whose previous command
	// was consumed (an advancer took the saga's lease, or released it,
	// since) recovery makes of a saga that does not move before it gives
	// up: the saga fails, its order is FAILED, and a dead letter
	// (error_type "stuck") is written for an operator (default
	// DefaultMaxResends). Every transition resets the count. A resend
	// whose previous command is still unconsumed is not counted: a queue
	// backlog delays a saga, it never fails it.
	MaxResends int
	// MaxWait bounds how long a saga's command may stay unconsumed, from
	// the time it became due, through resends whose commands are not
	// consumed either, before recovery gives the saga up as above: past
	// the queue's message retention every one of those commands is lost
	// (default DefaultMaxWait, the saga commands queue's retention).
	MaxWait time.Duration
	// LoopLimit is passed to dlq.Record for those dead letters (default dlq.DefaultLoopLimit).
	LoopLimit int
	// BatchSize bounds each job per run (default DefaultBatchSize).
	BatchSize int
	// ReconcileBatch bounds the finished sagas checked per final state (default BatchSize).
	ReconcileBatch int
	// Dispatcher, if set, publishes resend commands right after commit.
	Dispatcher outboxwrite.Dispatcher
	// DispatchTimeout bounds the fast path (default DefaultDispatchTimeout).
	DispatchTimeout time.Duration
	// DispatchLease keeps the relay off rows being dispatched (default
	// DefaultDispatchLease; 0 without a Dispatcher).
	DispatchLease time.Duration
	// Shards is the number of outbox shards (default DefaultShards).
	Shards int
	// Owner names the recovery in outbox leases (default RecoveryOwner).
	Owner string
	// Log is the logger (default slog.Default()).
	Log *slog.Logger
	// Steps is the step table, to name a saga's step (default CreateOrderSaga).
	Steps Steps
}

// Defaults of RecoveryConfig. Those with a setting are config.Default()'s.
const (
	DefaultStuckAfter = config.DefaultRecoveryStuckAfter // RECOVERY_STUCK_AFTER
	DefaultMaxResends = config.DefaultRecoveryMaxResends // RECOVERY_MAX_RESENDS
	DefaultMaxWait    = config.DefaultRecoveryMaxWait    // RECOVERY_MAX_WAIT
	DefaultBatchSize  = config.DefaultRecoveryBatchSize  // RECOVERY_BATCH_SIZE
	// RecoveryOwner is the default owner of the rows recovery leases.
	RecoveryOwner = "sagarecovery"
)

// NewRecovery builds a Recovery from cfg with its defaults applied.
// Errors: Invalid when the Store is missing or a setting is negative
// (naming every such field).
func NewRecovery(cfg RecoveryConfig) (*Recovery, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	out, err := outboxwrite.New(outboxwrite.Config{Dispatcher: cfg.Dispatcher, Timeout: cfg.DispatchTimeout})
	if err != nil {
		return nil, err
	}
	return &Recovery{c: cfg, out: out}, nil
}

func (c *RecoveryConfig) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = randomID
	}
	setDuration(&c.StuckAfter, DefaultStuckAfter)
	if c.MaxResends == 0 {
		c.MaxResends = DefaultMaxResends
	}
	setDuration(&c.MaxWait, DefaultMaxWait)
	if c.LoopLimit == 0 {
		c.LoopLimit = dlq.DefaultLoopLimit
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.ReconcileBatch == 0 {
		c.ReconcileBatch = c.BatchSize
	}
	setDuration(&c.DispatchLease, DefaultDispatchLease)
	if c.Dispatcher == nil && c.DispatchLease > 0 {
		c.DispatchLease = 0
	}
	setDuration(&c.DispatchTimeout, DefaultDispatchTimeout)
	if c.Shards == 0 {
		c.Shards = DefaultShards
	}
	if c.Owner == "" {
		c.Owner = RecoveryOwner
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if len(c.Steps) == 0 {
		c.Steps = CreateOrderSaga
	}
}

// validate refuses a configuration without a store or with a negative
// setting, in one apperr.Invalid naming every such field. It runs on c with
// its defaults applied, which only fill zero fields.
func (c *RecoveryConfig) validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	validate.NotNegative(&p, "StuckAfter", c.StuckAfter)
	validate.NotNegative(&p, "MaxWait", c.MaxWait)
	validate.NotNegative(&p, "DispatchLease", c.DispatchLease)
	validate.NotNegative(&p, "DispatchTimeout", c.DispatchTimeout)
	validate.NotNegative(&p, "MaxResends", c.MaxResends)
	validate.NotNegative(&p, "LoopLimit", c.LoopLimit)
	validate.NotNegative(&p, "BatchSize", c.BatchSize)
	validate.NotNegative(&p, "ReconcileBatch", c.ReconcileBatch)
	validate.NotNegative(&p, "Shards", c.Shards)
	return p.Err("orchestrator.NewRecovery")
}

// Config returns the recovery's configuration with its defaults applied
// (to build another like it).
func (r *Recovery) Config() RecoveryConfig { return r.c }

// Report is the JSON outcome of one Run.
type Report struct {
	// DueSagas is how many stuck sagas were listed; Resent got a fresh command.
	DueSagas int `json:"due_sagas"`
	Resent   int `json:"resent"`
	// GaveUp sagas had been resent MaxResends times without moving,
	// or their commands stayed unconsumed for MaxWait: they were failed
	// and dead-lettered (error_type "stuck").
	GaveUp int `json:"gave_up"`
	// KeysReleased idempotency keys were deleted (expired, or in progress with a lapsed lock).
	KeysReleased int `json:"keys_released"`
	InboxDeleted int `json:"inbox_deleted"`
	// ReconcileChecked finished sagas were compared with their orders; Reconciled orders were repaired.
	ReconcileChecked int `json:"reconcile_checked"`
	Reconciled       int `json:"reconciled"`
	// Errors counts items that failed (retried by the next run).
	Errors int `json:"errors"`
}

// Run performs one recovery pass. It returns the report and the joined
// errors of the items that failed (the rest still ran). It logs no summary:
// the caller (App.Recover) logs one for every job of the run, at debug when
// the run found nothing to do.
func (r *Recovery) Run(ctx context.Context) (Report, error) {
	var rep Report
	var errs []error
	note := func(err error) {
		if err != nil {
			rep.Errors++
			if len(errs) < 10 {
				errs = append(errs, err)
			}
		}
	}
	// The independent read-only lists of every job share one snapshot
	// (one View: one round trip per list plus one commit); each item is
	// re-checked in its own read-write transaction.
	now := r.now()
	var due, diverged []saga.Instance
	var stale []idempotency.Record
	err := r.c.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		rep.ReconcileChecked = 0
		var err error
		if due, err = r.listStuck(ctx, tx, now); err != nil {
			return err
		}
		if stale, err = tx.ListStaleIdempotencyKeys(ctx, now, r.c.BatchSize); err != nil {
			return err
		}
		diverged, err = r.listDiverged(ctx, tx, &rep)
		return err
	})
	note(err)
	if err == nil {
		r.resend(ctx, &rep, due, note)
		note(r.releaseKeys(ctx, &rep, stale))
	}
	note(r.deleteInbox(ctx, &rep))
	if err == nil {
		rep.Reconciled += r.forEach(ctx, diverged, r.repair, note)
	}
	return rep, errors.Join(errs...)
}

// releaseKeys deletes idempotency keys that are expired or whose in-progress
// lock lapsed, listing and re-checking each inside the transaction; listed
// is what Run's snapshot found (none: nothing to do, no transaction).
func (r *Recovery) releaseKeys(ctx context.Context, rep *Report, listed []idempotency.Record) error {
	if len(listed) == 0 {
		return nil
	}
	var n int
	err := r.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		n = 0
		now := r.now()
		stale, err := tx.ListStaleIdempotencyKeys(ctx, now, r.c.BatchSize)
		if err != nil {
			return err
		}
		for _, k := range stale {
			if !staleKey(k, now) {
				continue
			}
			if err := tx.DeleteIdempotencyKey(ctx, k.Scope, k.Key); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.KeysReleased += n
	return nil
}

// staleKey: expired, or in progress with a lapsed lock.
func staleKey(k idempotency.Record, now time.Time) bool {
	if !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt) {
		return true
	}
	return k.Status == idempotency.StatusInProgress && !now.Before(k.LockedUntil)
}

func (r *Recovery) deleteInbox(ctx context.Context, rep *Report) error {
	var n int
	err := r.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.DeleteExpiredInbox(ctx, r.now(), r.c.BatchSize)
		return err
	})
	if err != nil {
		return err
	}
	rep.InboxDeleted += n
	return nil
}

func (r *Recovery) now() time.Time { return r.c.Now().UTC() }
