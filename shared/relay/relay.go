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
	"context"
	"fmt"
	"log/slog"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/dlq"
	"ordersaga/shared/outbox"
	"ordersaga/shared/queue"
	"ordersaga/shared/resilience"
	"ordersaga/shared/store"
	"ordersaga/shared/textcut"
)

// Relay moves outbox rows to queues. Fields are set once at wiring time;
// a Relay is safe for concurrent use (each call claims its own rows).
type Relay struct {
	Store store.Store
	Queue queue.Queue
	// URLs maps an outbox destination (outbox.DestSagaCommands, ...) to a queue URL.
	URLs map[string]string
	// Owner names this relay instance in leases (e.g. the function request id).
	Owner string
	// Shards is the number of outbox shards (OUTBOX_SHARDS); every run
	// claims from each of them (default 1).
	Shards      int
	BatchSize   int           // rows per claim (default 100)
	MaxAttempts int           // publish attempts before a row is dead (default 10)
	Lease       time.Duration // how long a claim keeps other relays off (default 30 s)
	Backoff     resilience.Backoff
	// LoopLimit: redrives after which a row that dies again is flagged (dlq.Record).
	LoopLimit int
	Now       func() time.Time
	NewID     func() string
	Log       *slog.Logger
	// Hooks, all optional.
	OnPublished func(destination string, n int)
	OnFailed    func(destination string, n int)
	OnDead      func(destination string, errorType string)
	// AfterSend is a test hook called after the queue accepted a batch and
	// before it is marked published (crash-injection point).
	AfterSend func(events []outbox.Event) error
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
	// Stopped says why the run ended: "drained" (nothing due), "blocked"
	// (due rows wait behind an earlier row of their aggregate that is leased
	// or backing off), "deadline" or "error".
	Stopped string `json:"stopped"`
	// Blocked is how many due rows the last claim saw but could not take.
	Blocked int `json:"blocked"`
}

func (r *Relay) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Relay) batchSize() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	return 100
}

func (r *Relay) maxAttempts() int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	return 10
}

func (r *Relay) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return 30 * time.Second
}

func (r *Relay) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// Run relays batches until no row is due or until budget has passed (and
// always stops a safety margin before ctx's deadline). It never loops forever.
func (r *Relay) Run(ctx context.Context, budget time.Duration) (Report, error) {
	start := r.now()
	var rep Report
	rep.Stopped = "drained"
	for {
		if budget > 0 && r.now().Sub(start) >= budget {
			rep.Stopped = "deadline"
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 2*time.Second {
			rep.Stopped = "deadline"
			break
		}
		n, err := r.RunOnce(ctx, &rep)
		if err != nil {
			rep.Stopped = "error"
			r.fillBacklog(ctx, &rep)
			return rep, err
		}
		if n == 0 {
			if rep.Blocked > 0 {
				rep.Stopped = "blocked"
			}
			break
		}
	}
	r.fillBacklog(ctx, &rep)
	return rep, nil
}

func (r *Relay) fillBacklog(ctx context.Context, rep *Report) {
	_ = r.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		n, oldest, err := tx.OutboxBacklog(ctx)
		if err != nil {
			return err
		}
		rep.Pending = n
		if n > 0 && !oldest.IsZero() {
			rep.OldestPendingAgeSeconds = r.now().Sub(oldest).Seconds()
		}
		return nil
	})
}

// RunOnce claims one batch from each shard, publishes them and records the
// outcome in rep. It returns the number of rows claimed (0 = nothing was due).
func (r *Relay) RunOnce(ctx context.Context, rep *Report) (int, error) {
	total, blockedSum := 0, 0
	for shard := 0; shard < max(r.Shards, 1); shard++ {
		claimed, blocked, err := r.claim(ctx, shard)
		if err != nil {
			return total, err
		}
		blockedSum += blocked
		if len(claimed) == 0 {
			continue
		}
		rep.Batches++
		rep.Claimed += len(claimed)
		pub, failed, dead, err := r.publish(ctx, claimed)
		rep.Published += pub
		rep.Failed += failed
		rep.Dead += dead
		total += len(claimed)
		if err != nil {
			return total, err
		}
	}
	rep.Blocked = blockedSum
	return total, nil
}

// claim leases up to BatchSize due rows, at most one per aggregate and only
// the aggregate's earliest pending row, in one transaction.
func (r *Relay) claim(ctx context.Context, shard int) ([]outbox.Event, int, error) {
	var claimed []outbox.Event
	blocked := 0
	err := r.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		claimed, blocked = claimed[:0], 0
		now := r.now()
		// One batch of due rows usually fills the claim. When rows queued
		// behind an aggregate's earlier row (leased or backing off) leave
		// it short, look four batches deep, so they do not hide claimable
		// rows behind them.
		for _, window := range []int{r.batchSize(), 4 * r.batchSize()} {
			due, err := tx.ListOutboxDue(ctx, shard, now, window)
			if err != nil {
				return err
			}
			before := len(claimed)
			if claimed, err = r.take(ctx, tx, due, claimed, now); err != nil {
				return err
			}
			blocked = len(due) - (len(claimed) - before)
			if len(claimed) >= r.batchSize() || len(due) < window {
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

// take leases the rows of due that are the earliest pending row of their
// aggregate (one per aggregate, skipping those already in claimed) until the
// batch is full, and returns claimed with them appended.
func (r *Relay) take(ctx context.Context, tx store.Tx, due, claimed []outbox.Event, now time.Time) ([]outbox.Event, error) {
	if len(due) == 0 || len(claimed) >= r.batchSize() {
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
	taken := make(map[string]bool, len(due)+len(claimed))
	for _, e := range claimed {
		taken[e.AggregateID] = true
	}
	for _, e := range due {
		if len(claimed) >= r.batchSize() {
			break
		}
		if taken[e.AggregateID] || earliest[e.AggregateID] != e.ID {
			continue // taken already, or an earlier row of this aggregate must go first
		}
		taken[e.AggregateID] = true
		prev := e.Version
		e.LeaseOwner, e.LeaseUntil, e.Version = r.Owner, now.Add(r.lease()), e.Version+1
		if err := tx.UpdateOutbox(ctx, e, prev); err != nil {
			return nil, err
		}
		claimed = append(claimed, e)
	}
	return claimed, nil
}

// outcome of sending one row.
type outcome struct {
	event outbox.Event
	err   error
}

// publish sends claimed rows and records each outcome in one transaction.
func (r *Relay) publish(ctx context.Context, claimed []outbox.Event) (published, failed, dead int, err error) {
	results := r.send(ctx, claimed)
	if r.AfterSend != nil {
		var sent []outbox.Event
		for _, o := range results {
			if o.err == nil {
				sent = append(sent, o.event)
			}
		}
		if err := r.AfterSend(sent); err != nil {
			return 0, 0, 0, err
		}
	}
	var deadTypes []deadRow // hooks run after commit: the closure may run more than once
	err = r.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		published, failed, dead, deadTypes = 0, 0, 0, deadTypes[:0]
		now := r.now()
		for _, o := range results {
			p, f, d, errType, err := r.record(ctx, tx, o, now)
			if err != nil {
				return err
			}
			published, failed, dead = published+p, failed+f, dead+d
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
		if r.OnDead != nil {
			r.OnDead(d.destination, d.errorType)
		}
	}
	return published, failed, dead, nil
}

func (r *Relay) report(results []outcome) {
	for _, o := range results {
		if o.err == nil {
			if r.OnPublished != nil {
				r.OnPublished(o.event.Destination, 1)
			}
			logPublished(r.log(), o.event, "relay")
			continue
		}
		if r.OnFailed != nil {
			r.OnFailed(o.event.Destination, 1)
		}
		r.log().Warn("outbox publish failed", "outbox_event_id", o.event.ID, "event_type", o.event.EventType,
			"idempotency_key", o.event.Metadata[outbox.AttrIdempotencyKey],
			"order_id", o.event.Metadata[outbox.AttrOrderID], "saga_id", o.event.Metadata[outbox.AttrSagaID],
			"attempt", o.event.Attempts+1, "error", o.err)
	}
}

// record applies one send outcome. A row whose lease was taken over by
// another relay (version moved on) is left alone: that relay owns it now.
// deadRow names a row that went dead (for the OnDead hook).
type deadRow struct{ destination, errorType string }

func (r *Relay) record(ctx context.Context, tx store.Tx, o outcome, now time.Time) (published, failed, dead int, errorType string, err error) {
	e := o.event
	prev := e.Version
	e.Version++
	e.LeaseOwner, e.LeaseUntil = "", time.Time{}
	if o.err == nil {
		e.Status, e.PublishedAt, e.LastError = outbox.StatusPublished, now, ""
		if err := tx.UpdateOutbox(ctx, e, prev); err != nil {
			if apperr.Is(err, apperr.Conflict) {
				return 0, 0, 0, "", nil
			}
			return 0, 0, 0, "", err
		}
		return 1, 0, 0, "", nil
	}
	e.Attempts++
	e.LastError = truncate(o.err.Error(), 1000)
	if e.Attempts >= r.maxAttempts() {
		e.Status = outbox.StatusDead
	} else {
		e.NextAttemptAt = now.Add(r.Backoff.Delay(e.Attempts - 1))
	}
	if err := tx.UpdateOutbox(ctx, e, prev); err != nil {
		if apperr.Is(err, apperr.Conflict) {
			return 0, 0, 0, "", nil
		}
		return 0, 0, 0, "", err
	}
	if e.Status != outbox.StatusDead {
		return 0, 1, 0, "", nil
	}
	// dlq.Record reopens this row's entry if it was redriven before (loop guard).
	d, err := dlq.Record(ctx, tx, deadLetter(e, o.err, r.newID(), now), r.LoopLimit)
	if err != nil {
		return 0, 0, 0, "", err
	}
	return 0, 1, 1, d.ErrorType, nil
}

func (r *Relay) newID() string {
	if r.NewID != nil {
		return r.NewID()
	}
	return fmt.Sprintf("dl-%d", time.Now().UnixNano())
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Cut(s, n)
}

// logPublished writes one line per published event with its correlation chain.
func logPublished(l *slog.Logger, e outbox.Event, path string) {
	l.Info("outbox event published", "outbox_event_id", e.ID, "event_type", e.EventType, "destination", e.Destination,
		"idempotency_key", e.Metadata[outbox.AttrIdempotencyKey], "order_id", e.Metadata[outbox.AttrOrderID],
		"saga_id", e.Metadata[outbox.AttrSagaID], "path", path)
}
