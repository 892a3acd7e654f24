// Package redrive holds the dead-letter use cases shared by the console
// function (dlqredrive) and the admin HTTP API: ingest YMQ dead-letter queues
// into the dead-letter store, list / show / stats, redrive (queue messages
// back to their source queue, dead outbox rows back to pending, failed sagas
// back to compensating), discard, soft delete and purge, and the audit of
// every operator action. It also decodes the console's JSON command.
//
// Safety rules: a redrive selects only open entries, never flagged ones
// unless named by id with force; it is bounded by max and paced by
// rate_per_sec; a dry run changes nothing but its own audit record; nothing
// is deleted except by an audited purge of old discarded entries.
package redrive

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/validate"
)

// Defaults and hard bounds. Those with a variable are config.Default()'s values.
const (
	// DefaultMaxPerCall bounds max when Config.MaxPerCall is not set (REDRIVE_MAX).
	DefaultMaxPerCall = config.DefaultRedriveMaxPerCall
	// DefaultMaxRate bounds rate_per_sec when Config.MaxRate is not set (REDRIVE_MAX_RATE).
	DefaultMaxRate = config.DefaultRedriveMaxRate
	// DefaultLoopLimit flags an entry redriven this many times that fails
	// again, when Config.LoopLimit is not set (REDRIVE_LOOP_LIMIT).
	DefaultLoopLimit = config.DefaultRedriveLoopLimit
	// DefaultShards is the outbox shard count when Config.Shards is not set (OUTBOX_SHARDS).
	DefaultShards = config.DefaultShards
	// DefaultMax is the max of a redrive or purge that gives none.
	DefaultMax = 100
	// DefaultRate is the rate of a redrive that gives none (per second).
	DefaultRate = 10.0
	// MinRate is the slowest accepted rate_per_sec (one per 100 s).
	MinRate = 0.01
	// MaxIDs is the most ids one command may name.
	MaxIDs = 1000
	// MinPurgeAge is the youngest a discarded entry may be to be purged.
	MinPurgeAge = 24 * time.Hour
	// showAuditScan is how many recent audit records Show searches.
	showAuditScan = 500
	// statsScanLimit bounds the entries Stats reads.
	statsScanLimit = 100_000
)

// Config configures a Service (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	Store store.Store // required
	// Queue is needed by Ingest and by redrives of queue entries.
	Queue queue.Queue
	// QueueURLs maps a queue name (source queues and dead-letter queues) to its URL.
	QueueURLs map[string]string
	// DLQs maps a dead-letter queue name to the name of its source queue.
	DLQs map[string]string
	// Shards is the number of outbox shards (default DefaultShards), for the
	// saga.advance rows a saga redrive writes.
	Shards int
	// LoopLimit: an entry redriven this many times that fails again is
	// flagged (default DefaultLoopLimit).
	LoopLimit int
	// MaxPerCall bounds max (default DefaultMaxPerCall).
	MaxPerCall int
	// MaxRate bounds rate_per_sec (default DefaultMaxRate).
	MaxRate float64
	// ReceiveWait is the long poll of each ingest Receive (0 = short poll;
	// use about 1 s on YMQ, whose short polls may miss messages).
	ReceiveWait time.Duration
	// Now is the clock (default time.Now); the Service reads it in UTC.
	Now func() time.Time
	// NewID names audit records and dead letters (default a random UUID).
	NewID func() string
	// Sleep paces redrives (default: wait on a timer or ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger // default slog.Default()
	// Steps names a saga's step in a dead letter's detail (the advancer's
	// table: orchestrator.CreateOrderSaga.Table()).
	Steps saga.Table
	// OnIngested, optional, counts dead letters ingested from queues
	// (dlq_additions_total{queue,error_type}).
	OnIngested func(queue, errorType string)
}

// Service implements the use cases. It is built once by New and safe for
// concurrent use.
type Service struct {
	cfg Config
	lim limits // cfg's bounds of a command
}

// New returns a Service with cfg's zero fields set to their defaults. It
// fails (apperr.Invalid, naming the fields; see Config.Validate) without a
// store or on a negative setting.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Service{cfg: cfg, lim: limits{maxPerCall: cfg.MaxPerCall, maxRate: cfg.MaxRate}}, nil
}

// Validate reports what New would refuse: no store, or a negative Shards,
// LoopLimit, MaxPerCall, MaxRate or ReceiveWait. Errors are apperr.Invalid
// and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	validate.NotNegative(&p, "Shards", c.Shards)
	validate.NotNegative(&p, "LoopLimit", c.LoopLimit)
	validate.NotNegative(&p, "MaxPerCall", c.MaxPerCall)
	validate.NotNegative(&p, "MaxRate", c.MaxRate)
	validate.NotNegative(&p, "ReceiveWait", c.ReceiveWait)
	return p.Err("redrive.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.Shards = cmp.Or(c.Shards, DefaultShards)
	c.LoopLimit = cmp.Or(c.LoopLimit, DefaultLoopLimit)
	c.MaxPerCall = cmp.Or(c.MaxPerCall, DefaultMaxPerCall)
	c.MaxRate = cmp.Or(c.MaxRate, DefaultMaxRate)
	c.Now = config.UTCClock(c.Now)
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
	if c.Sleep == nil {
		c.Sleep = resilience.SleepContext
	}
	c.Log = cmp.Or(c.Log, slog.Default())
	if c.OnIngested == nil {
		c.OnIngested = func(string, string) {}
	}
}

// audit writes one audit record in its own transaction. It is called after
// the action, with a context that survives the caller's cancellation, so a
// partly done action is still recorded.
func (s *Service) audit(ctx context.Context, actor, action string, params any, count int, outcome string, detail any) (string, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	d, err := json.Marshal(detail)
	if err != nil {
		return "", err
	}
	rec := dlq.AuditRecord{ID: s.cfg.NewID(), At: s.cfg.Now(), Actor: actor, Action: action, Params: p,
		Count: count, Outcome: outcome, Detail: d}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertAudit(ctx, rec) })
	if err != nil {
		s.cfg.Log.Error("dead-letter audit record lost", "actor", actor, "action", action, "outcome", outcome, "error", err)
		return "", err
	}
	return rec.ID, nil
}
