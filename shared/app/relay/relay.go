// Package relay publishes transactional-outbox rows to queues: claim a
// bounded batch under a lease (a conditional update inside one transaction;
// no SKIP LOCKED, which YDB lacks), send in batches of ten, mark published.
// A failed row backs off with full jitter; after the maximum attempts it is
// dead and a dead letter records why.
//
// Guarantees: every committed row is sent at least once (a crash after the
// send and before the mark only causes a resend once the lease lapses); rows
// of one aggregate are sent in creation order, one at a time; every message
// carries the outbox event id so consumers can deduplicate.
package relay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/text"
	"ordersaga/shared/kit/validate"
)

// Defaults of a Config's zero fields: config.Default()'s values, so a
// Relay built with a zero field behaves as one built from the environment.
const (
	DefaultBatchSize   = config.DefaultRelayBatchSize   // RELAY_BATCH_SIZE
	DefaultMaxAttempts = config.DefaultRelayMaxAttempts // RELAY_MAX_ATTEMPTS
	DefaultLease       = config.DefaultRelayLease       // RELAY_LEASE
	DefaultBackoffBase = config.DefaultRelayBackoffBase // RELAY_BACKOFF_BASE
	DefaultBackoffCap  = config.DefaultRelayBackoffCap  // RELAY_BACKOFF_CAP
	DefaultShards      = config.DefaultShards           // OUTBOX_SHARDS
	DefaultLoopLimit   = config.DefaultRedriveLoopLimit // REDRIVE_LOOP_LIMIT
	// DefaultSendConcurrency: queue calls in flight at once (RELAY_SEND_CONCURRENCY).
	DefaultSendConcurrency = config.DefaultRelaySendConcurrency
	// DefaultOwner names a relay built without an Owner in its leases.
	DefaultOwner = "relay"
	// MaxBatchSize is the largest BatchSize (RELAY_BATCH_SIZE's bound).
	MaxBatchSize = 1000
	// MaxSendConcurrency is the largest SendConcurrency (RELAY_SEND_CONCURRENCY's bound).
	MaxSendConcurrency = config.MaxRelaySendConcurrency
)

// Config configures a Relay (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	Store store.Store // required
	Queue queue.Queue // required
	// URLs maps an outbox destination (outbox.DestSagaCommands, ...) to a queue URL.
	URLs map[string]string
	// Owner names this relay instance in leases (e.g. the function request
	// id; default DefaultOwner).
	Owner string
	// Shards is the number of outbox shards (OUTBOX_SHARDS); every run
	// claims from each of them (default DefaultShards).
	Shards      int
	BatchSize   int           // rows per claim, at most MaxBatchSize (default DefaultBatchSize)
	MaxAttempts int           // publish attempts before a row is dead (default DefaultMaxAttempts)
	Lease       time.Duration // how long a claim keeps other relays off (default DefaultLease)
	// Backoff spaces a failed row's attempts; a zero Base or Cap takes
	// DefaultBackoffBase or DefaultBackoffCap (Rand is kept).
	Backoff resilience.Backoff
	// LoopLimit: redrives after which a row that dies again is flagged
	// (dlq.Record; default DefaultLoopLimit).
	LoopLimit int
	// SendConcurrency bounds the SendBatch calls of one round in flight at
	// once, at most MaxSendConcurrency (default DefaultSendConcurrency; 1
	// sends one call after another).
	SendConcurrency int
	// Now is the clock (default time.Now); the Relay reads it in UTC.
	Now func() time.Time
	// NewID names dead letters (default a random UUID).
	NewID func() string
	Log   *slog.Logger // default slog.Default()
	Hooks Hooks
}

// Hooks observe a Relay; all optional.
type Hooks struct {
	OnPublished func(destination string, n int)
	OnFailed    func(destination string, n int)
	OnDead      func(destination string, errorType string)
}

// ErrCrash marks a queue error that stands for the death of the process
// after the queue accepted a batch and before the relay marked its rows
// published (a crash a test or the chaos harness injects by decorating the
// queue): a SendBatch error wrapping it makes Run and RunOnce return it at
// once, and Dispatch stop, recording nothing; the rows stay leased until
// their lease lapses, then are sent again.
var ErrCrash = errors.New("relay: process crashed")

// Relay moves outbox rows to queues. It is built once by New and safe for
// concurrent use (each call claims its own rows).
type Relay struct {
	cfg Config
	// ts is cfg.Queue when it can store messages in a store transaction
	// (decided once, in New), else nil.
	ts TxSender
}

// New returns a Relay with cfg's zero fields set to their defaults. It
// fails (apperr.Invalid, naming every bad field; see Config.Validate)
// without a store or a queue, on a negative setting, a BatchSize above
// MaxBatchSize or a backoff cap below its base.
func New(cfg Config) (*Relay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	ts, _ := cfg.Queue.(TxSender)
	return &Relay{cfg: cfg, ts: ts}, nil
}

// Validate reports what New would refuse: a missing store or queue, a
// negative setting, a BatchSize above MaxBatchSize, a SendConcurrency above
// MaxSendConcurrency, or a backoff cap below its base (after the defaults).
// Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	p.Require(c.Queue != nil, "Queue")
	validate.NotNegative(&p, "Shards", c.Shards)
	validate.NotNegative(&p, "BatchSize", c.BatchSize)
	validate.NotNegative(&p, "MaxAttempts", c.MaxAttempts)
	validate.NotNegative(&p, "Lease", c.Lease)
	validate.NotNegative(&p, "LoopLimit", c.LoopLimit)
	validate.NotNegative(&p, "SendConcurrency", c.SendConcurrency)
	validate.NotNegative(&p, "Backoff.Base", c.Backoff.Base)
	validate.NotNegative(&p, "Backoff.Cap", c.Backoff.Cap)
	validate.AtMost(&p, "BatchSize", c.BatchSize, MaxBatchSize)
	validate.AtMost(&p, "SendConcurrency", c.SendConcurrency, MaxSendConcurrency)
	c.setDefaults()
	if c.Backoff.Base > 0 && c.Backoff.Cap > 0 && c.Backoff.Cap < c.Backoff.Base {
		p.Add("Backoff.Cap", "must be at least the backoff base %s (got %s)", c.Backoff.Base, c.Backoff.Cap)
	}
	return p.Err("relay.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Owner == "" {
		c.Owner = DefaultOwner
	}
	c.Shards = cmp.Or(c.Shards, DefaultShards)
	c.BatchSize = cmp.Or(c.BatchSize, DefaultBatchSize)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.Lease = cmp.Or(c.Lease, DefaultLease)
	c.LoopLimit = cmp.Or(c.LoopLimit, DefaultLoopLimit)
	c.SendConcurrency = cmp.Or(c.SendConcurrency, DefaultSendConcurrency)
	c.Backoff.Base = cmp.Or(c.Backoff.Base, DefaultBackoffBase)
	c.Backoff.Cap = cmp.Or(c.Backoff.Cap, DefaultBackoffCap)
	c.Now = config.UTCClock(c.Now)
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
	c.Log = cmp.Or(c.Log, slog.Default())
	if c.Hooks.OnPublished == nil {
		c.Hooks.OnPublished = func(string, int) {}
	}
	if c.Hooks.OnFailed == nil {
		c.Hooks.OnFailed = func(string, int) {}
	}
	if c.Hooks.OnDead == nil {
		c.Hooks.OnDead = func(string, string) {}
	}
}

// Report is the outcome of one relay invocation, returned as JSON by the function.
type Report struct {
	Batches   int `json:"batches"`
	Claimed   int `json:"claimed"`
	Published int `json:"published"`
	Failed    int `json:"failed"`
	Dead      int `json:"dead"`
	// Pending and OldestPendingAgeSeconds describe the backlog after the run.
	Pending                 int     `json:"pending"`
	OldestPendingAgeSeconds float64 `json:"oldest_pending_age_seconds"`
	// Stopped says why the run ended: "drained" (nothing due that may
	// go: rows behind their aggregate's leased, backing-off or dead first
	// row wait, counted in Pending), "blocked" (the last claim found due
	// rows behind an earlier row of their aggregate, one redriven after
	// them, and set them aside), "deadline" or "error".
	Stopped string `json:"stopped"`
	// Blocked is how many due rows the last claim saw but could not take.
	Blocked int `json:"blocked"`
}

// Run relays batches until no row is due or until budget has passed (and
// always stops a safety margin before ctx's deadline). It never loops forever.
//
// Run is pipelined: while one round of claimed rows is being sent, the
// outcomes of the previous round are recorded and the next round is
// claimed, so the queue is rarely idle waiting for the store. Correctness
// does not depend on the overlap: a row is claimed only when it is its
// aggregate's earliest pending row, and rows in flight are still pending
// (leased) until recorded, so the next round never holds a later row of an
// aggregate whose earlier row is still being sent.
func (r *Relay) Run(ctx context.Context, budget time.Duration) (Report, error) {
	p := &pipeline{r: r, ctx: ctx, start: r.cfg.Now(), budget: budget}
	p.rep.Stopped = "drained"
	if err := p.run(); err != nil {
		p.rep.Stopped = "error"
		r.fillBacklog(ctx, &p.rep)
		return p.rep, err
	}
	if p.rep.Stopped == "drained" && p.rep.Blocked > 0 {
		p.rep.Stopped = "blocked"
	}
	r.fillBacklog(ctx, &p.rep)
	return p.rep, nil
}

// pipeline is one Run: each round's rows are sent while the round before
// is recorded and the next one claimed.
type pipeline struct {
	r      *Relay
	ctx    context.Context
	start  time.Time
	budget time.Duration
	rep    Report
}

// stop reports whether the run must claim no more: its budget is spent,
// or its context's deadline is less than 2 s away.
func (p *pipeline) stop() bool {
	if p.budget > 0 && p.r.cfg.Now().Sub(p.start) >= p.budget {
		return true
	}
	dl, ok := p.ctx.Deadline()
	return ok && time.Until(dl) < 2*time.Second
}

// claim claims the next round unless the run must stop (then Stopped is
// "deadline").
func (p *pipeline) claim() ([]outbox.Event, error) {
	if p.stop() {
		p.rep.Stopped = "deadline"
		return nil, nil
	}
	return p.r.claimRound(p.ctx, &p.rep)
}

// run claims, sends and records rounds until the outbox is drained, the
// run must stop, or the store fails.
func (p *pipeline) run() error {
	claimed, err := p.claim()
	if err != nil {
		return err
	}
	var sent []outcome // sent by the previous round, not recorded yet
	for {
		var inflight chan []outcome
		if len(claimed) > 0 {
			inflight = make(chan []outcome, 1)
			go func(evs []outbox.Event) { inflight <- p.r.send(p.ctx, evs) }(claimed)
		}
		recorded := false
		if sent != nil {
			if err := p.r.recordRound(p.ctx, sent, &p.rep); err != nil {
				if inflight != nil {
					<-inflight // its rows stay leased and are sent again after the lease
				}
				return err
			}
			sent, recorded = nil, true
		}
		if inflight == nil {
			// The last claim ran before the round it overlapped was
			// recorded, so it could not take the rows that round unblocked
			// (the next event of an aggregate whose earlier one was just
			// published). Claim once more before calling the outbox drained.
			if !recorded || p.stop() {
				return nil
			}
			if claimed, err = p.r.claimRound(p.ctx, &p.rep); err != nil {
				return err
			}
			if len(claimed) == 0 {
				return nil
			}
			continue
		}
		next, claimErr := p.claim()
		sent = <-inflight
		if claimErr != nil {
			if err := p.r.recordRound(p.ctx, sent, &p.rep); err != nil {
				return err
			}
			return claimErr
		}
		claimed = next
	}
}

// claimRound claims one batch from each shard and counts them in rep.
func (r *Relay) claimRound(ctx context.Context, rep *Report) ([]outbox.Event, error) {
	var all []outbox.Event
	blockedSum := 0
	for shard := 0; shard < r.cfg.Shards; shard++ {
		claimed, blocked, err := r.claim(ctx, shard)
		if err != nil {
			return nil, err
		}
		blockedSum += blocked
		if len(claimed) > 0 {
			rep.Batches++
			rep.Claimed += len(claimed)
			all = append(all, claimed...)
		}
	}
	rep.Blocked = blockedSum
	return all, nil
}

// recordRound records the outcomes of one round; a crash (ErrCrash)
// records nothing.
func (r *Relay) recordRound(ctx context.Context, results []outcome, rep *Report) error {
	if err := crashed(results); err != nil {
		return err
	}
	pub, failed, dead, err := r.recordAll(ctx, results)
	rep.Published += pub
	rep.Failed += failed
	rep.Dead += dead
	return err
}

func (r *Relay) fillBacklog(ctx context.Context, rep *Report) {
	_ = r.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		n, oldest, err := tx.OutboxBacklog(ctx)
		if err != nil {
			return err
		}
		rep.Pending = n
		if n > 0 && !oldest.IsZero() {
			rep.OldestPendingAgeSeconds = r.cfg.Now().Sub(oldest).Seconds()
		}
		return nil
	})
}

// RunOnce claims one batch from each shard, publishes them and records the
// outcome in rep, without pipelining. It returns the number of rows claimed
// (0 = nothing was due).
func (r *Relay) RunOnce(ctx context.Context, rep *Report) (int, error) {
	claimed, err := r.claimRound(ctx, rep)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	return len(claimed), r.recordRound(ctx, r.send(ctx, claimed), rep)
}

// claim leases up to BatchSize due rows, at most one per aggregate and only
// the aggregate's earliest pending row, in one transaction.
func (r *Relay) claim(ctx context.Context, shard int) ([]outbox.Event, int, error) {
	var claimed []outbox.Event
	blocked := 0
	err := r.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		claimed, blocked = claimed[:0], 0
		now := r.cfg.Now()
		// The due list holds only aggregates' heads (store.OutboxRows.
		// ListOutboxDue), so rows queued behind a dead, backing-off or
		// leased row are never in it, however many there are. One list
		// usually fills the claim; when heads found behind a redriven row
		// (demoted by take) or rows that changed since a snapshot list
		// leave it short, list once more, four batches deep.
		for _, window := range []int{r.cfg.BatchSize, 4 * r.cfg.BatchSize} {
			due, err := r.listDue(ctx, tx, shard, now, window)
			if err != nil {
				return err
			}
			before := len(claimed)
			if claimed, err = r.take(ctx, tx, due, claimed, now); err != nil {
				return err
			}
			blocked = len(due) - (len(claimed) - before)
			if len(claimed) >= r.cfg.BatchSize || len(due) < window {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("claim outbox batch: %w", err)
	}
	return claimed, blocked, nil
}

// listDue lists the due rows of shard. The last configured shard also
// takes every shard above it: rows stamped while OUTBOX_SHARDS was larger
// (or by an instance still running with the larger setting) are claimed,
// never stranded. Order within an aggregate does not depend on shards:
// take only claims an aggregate's earliest pending row, whatever its shard.
func (r *Relay) listDue(ctx context.Context, tx store.Tx, shard int, now time.Time, limit int) ([]outbox.Event, error) {
	if shard == r.cfg.Shards-1 {
		return tx.ListOutboxDueFrom(ctx, shard, now, limit)
	}
	return tx.ListOutboxDue(ctx, shard, now, limit)
}

// take leases the rows of due that are the earliest pending row of their
// aggregate (one per aggregate, skipping those already in claimed) until the
// batch is full, and returns claimed with them appended. A row of due with
// an earlier blocking row is demoted (store.OutboxBatch.DemoteOutbox), so
// later lists do not return it until it is its aggregate's head again.
func (r *Relay) take(ctx context.Context, tx store.Tx, due, claimed []outbox.Event, now time.Time) ([]outbox.Event, error) {
	if len(due) == 0 || len(claimed) >= r.cfg.BatchSize {
		return claimed, nil
	}
	ids := make([]string, 0, len(due))
	for _, e := range due {
		ids = append(ids, e.AggregateID)
	}
	earliest, err := tx.EarliestPending(ctx, ids)
	if err != nil {
		return nil, err
	}
	var fresh []store.OutboxVersion
	var behind []string
	taken := make(map[string]bool, len(due)+len(claimed))
	for _, e := range claimed {
		taken[e.AggregateID] = true
	}
	for _, e := range due {
		first, ok := earliest[e.AggregateID]
		if ok && first != e.ID {
			// An earlier row of this aggregate must go first (one that
			// was redriven after e became the head): e leaves the due list
			// until that row stops blocking.
			behind = append(behind, e.ID)
			continue
		}
		if len(claimed) >= r.cfg.BatchSize || taken[e.AggregateID] || !ok {
			continue // batch full, aggregate taken already, or e changed since the list
		}
		taken[e.AggregateID] = true
		claimed = append(claimed, e)
		fresh = append(fresh, store.OutboxVersion{ID: e.ID, Version: e.Version})
	}
	if len(behind) > 0 {
		if err := tx.DemoteOutbox(ctx, behind); err != nil {
			return nil, err
		}
	}
	if len(fresh) == 0 {
		return claimed, nil
	}
	// One statement leases the whole batch. The rows were read in this
	// transaction, so all are at their version unless another relay raced
	// us; then the transaction is retried on fresh reads.
	until := now.Add(r.cfg.Lease)
	n, err := tx.LeaseOutbox(ctx, fresh, r.cfg.Owner, until)
	if err != nil {
		return nil, err
	}
	if n != len(fresh) {
		return nil, apperr.New(apperr.Transient, "relay: %d of %d claimed rows changed under the claim", len(fresh)-n, len(fresh))
	}
	for i := len(claimed) - len(fresh); i < len(claimed); i++ {
		claimed[i].LeaseOwner, claimed[i].LeaseUntil, claimed[i].Version = r.cfg.Owner, until, claimed[i].Version+1
	}
	return claimed, nil
}

// outcome of sending one row.
type outcome struct {
	event outbox.Event
	err   error
}

// crashed returns the first outcome error that wraps ErrCrash.
func crashed(results []outcome) error {
	for _, o := range results {
		if errors.Is(o.err, ErrCrash) {
			return o.err
		}
	}
	return nil
}

// recordAll records send outcomes in one transaction: every published row
// in one batched statement, each failed row on its own (rare; it may die).
func (r *Relay) recordAll(ctx context.Context, results []outcome) (published, failed, dead int, err error) {
	var ok []store.OutboxVersion
	for _, o := range results {
		if o.err == nil {
			ok = append(ok, store.OutboxVersion{ID: o.event.ID, Version: o.event.Version})
		}
	}
	var deadTypes []deadRow // hooks run after commit: the closure may run more than once
	err = r.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		published, failed, dead, deadTypes = 0, 0, 0, deadTypes[:0]
		now := r.cfg.Now()
		if len(ok) > 0 {
			// A row whose lease another relay took over (version moved on)
			// is left alone and not counted: that relay owns it now.
			n, err := tx.MarkOutboxPublished(ctx, ok, now)
			if err != nil {
				return err
			}
			published = n
		}
		for _, o := range results {
			if o.err == nil {
				continue
			}
			f, d, errType, err := r.recordFailure(ctx, tx, o, now)
			if err != nil {
				return err
			}
			failed, dead = failed+f, dead+d
			if d > 0 {
				deadTypes = append(deadTypes, deadRow{o.event.Destination, errType})
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("record outbox outcomes: %w", err)
	}
	r.report(results)
	for _, d := range deadTypes {
		r.cfg.Hooks.OnDead(d.destination, d.errorType)
	}
	return published, failed, dead, nil
}

func (r *Relay) report(results []outcome) {
	for _, o := range results {
		if o.err == nil {
			r.cfg.Hooks.OnPublished(o.event.Destination, 1)
			logPublished(r.cfg.Log, o.event, "relay")
			continue
		}
		r.cfg.Hooks.OnFailed(o.event.Destination, 1)
		r.cfg.Log.Warn("outbox publish failed", "outbox_event_id", o.event.ID, "event_type", o.event.EventType,
			"idempotency_key", o.event.Metadata[outbox.AttrIdempotencyKey],
			"order_id", o.event.Metadata[outbox.AttrOrderID], "saga_id", o.event.Metadata[outbox.AttrSagaID],
			"attempt", o.event.Attempts+1, "error", o.err)
	}
}

// deadRow names a row that went dead (for the OnDead hook).
type deadRow struct{ destination, errorType string }

// recordFailure applies one failed send: attempts+1 and a backoff, or dead
// with a dead letter after the maximum. A row whose lease was taken over by
// another relay (version moved on) is left alone: that relay owns it now.
func (r *Relay) recordFailure(ctx context.Context, tx store.Tx, o outcome, now time.Time) (failed, dead int, errorType string, err error) {
	e := o.event
	prev := e.Version
	e.Version++
	e.LeaseOwner, e.LeaseUntil = "", time.Time{}
	e.Attempts++
	e.LastError = text.Cut(o.err.Error(), 1000)
	if e.Attempts >= r.cfg.MaxAttempts {
		e.Status = outbox.StatusDead
	} else {
		e.NextAttemptAt = now.Add(r.cfg.Backoff.Delay(e.Attempts - 1))
	}
	if err := tx.UpdateOutbox(ctx, e, prev); err != nil {
		if apperr.Is(err, apperr.Conflict) {
			return 0, 0, "", nil
		}
		return 0, 0, "", err
	}
	if e.Status != outbox.StatusDead {
		return 1, 0, "", nil
	}
	// dlq.Record reopens this row's entry if it was redriven before (loop guard).
	d, err := dlq.Record(ctx, tx, deadLetter(e, o.err, r.cfg.NewID(), now), r.cfg.LoopLimit)
	if err != nil {
		return 0, 0, "", err
	}
	return 1, 1, d.ErrorType, nil
}

// deadLetter builds the dead-letter row of an outbox row that exhausted its attempts.
func deadLetter(e outbox.Event, cause error, id string, now time.Time) dlq.DeadLetter {
	kind := apperr.KindOf(cause).String()
	return dlq.DeadLetter{
		ID: id, Source: dlq.SourceOutbox, SourceRef: e.ID, Queue: e.Destination,
		Payload: e.Payload, Attrs: e.Attributes(), ErrorType: kind, Error: e.LastError,
		RetryCount: e.Attempts, FirstFailedAt: now, LastFailedAt: now,
		History: []dlq.Failure{{At: now, ErrorType: kind, Error: e.LastError}},
		Status:  dlq.StatusOpen, IdempotencyKey: e.Metadata[outbox.AttrIdempotencyKey],
		OrderID: e.Metadata[outbox.AttrOrderID], OutboxEventID: e.ID, SagaID: e.Metadata[outbox.AttrSagaID],
		CreatedAt: now, UpdatedAt: now, Version: 1,
	}
}

// logPublished writes one line per published event with its correlation chain.
func logPublished(l *slog.Logger, e outbox.Event, path string) {
	if !l.Enabled(context.Background(), slog.LevelInfo) {
		return // one line per event: skip building it when it is not written
	}
	l.Info("outbox event published", "outbox_event_id", e.ID, "event_type", e.EventType, "destination", e.Destination,
		"idempotency_key", e.Metadata[outbox.AttrIdempotencyKey], "order_id", e.Metadata[outbox.AttrOrderID],
		"saga_id", e.Metadata[outbox.AttrSagaID], "path", path)
}
