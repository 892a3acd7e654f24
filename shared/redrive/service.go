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
	"context"
	"encoding/json"
	"log/slog"
	"ordersaga/shared/saga"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/dlq"
	"ordersaga/shared/queue"
	"ordersaga/shared/store"
)

// Defaults and hard bounds.
const (
	// DefaultMaxPerCall bounds max when Service.MaxPerCall is not set.
	DefaultMaxPerCall = 1000
	// DefaultMaxRate bounds rate_per_sec when Service.MaxRate is not set.
	DefaultMaxRate = 100.0
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

// Service implements the use cases. Fields are set once at wiring time; a
// Service is safe for concurrent use.
type Service struct {
	Store store.Store
	// Queue is needed by Ingest and by redrives of queue entries.
	Queue queue.Queue
	// QueueURLs maps a queue name (source queues and dead-letter queues) to its URL.
	QueueURLs map[string]string
	// DLQs maps a dead-letter queue name to the name of its source queue.
	DLQs map[string]string
	// Shards is the number of outbox shards (default 1), for the saga.advance
	// rows a saga redrive writes.
	Shards int
	// LoopLimit: an entry redriven this many times that fails again is
	// flagged (default dlq.DefaultLoopLimit).
	LoopLimit int
	// MaxPerCall bounds max (default DefaultMaxPerCall).
	MaxPerCall int
	// MaxRate bounds rate_per_sec (default DefaultMaxRate).
	MaxRate float64
	// ReceiveWait is the long poll of each ingest Receive (0 = short poll;
	// use about 1 s on YMQ, whose short polls may miss messages).
	ReceiveWait time.Duration
	Now         func() time.Time
	NewID       func() string
	// Sleep paces redrives; the default waits on a timer or ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger
	// Steps names a saga's step in a dead letter's detail (the advancer's
	// table: orchestrator.CreateOrderSaga.Table()).
	Steps saga.Table
	// OnIngested, optional, counts dead letters ingested from queues
	// (dlq_additions_total{queue,error_type}).
	OnIngested func(queue, errorType string)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return uuid.NewString()
}

func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func (s *Service) loopLimit() int {
	if s.LoopLimit > 0 {
		return s.LoopLimit
	}
	return dlq.DefaultLoopLimit
}

func (s *Service) maxPerCall() int {
	if s.MaxPerCall > 0 {
		return s.MaxPerCall
	}
	return DefaultMaxPerCall
}

func (s *Service) maxRate() float64 {
	if s.MaxRate > 0 {
		return s.MaxRate
	}
	return DefaultMaxRate
}

func (s *Service) shards() int { return max(s.Shards, 1) }

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
	rec := dlq.AuditRecord{ID: s.newID(), At: s.now(), Actor: actor, Action: action, Params: p,
		Count: count, Outcome: outcome, Detail: d}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertAudit(ctx, rec) })
	if err != nil {
		s.log().Error("dead-letter audit record lost", "actor", actor, "action", action, "outcome", outcome, "error", err)
		return "", err
	}
	return rec.ID, nil
}
