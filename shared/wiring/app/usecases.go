package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// The use cases the function bodies call, one per function (the HTTP API is
// App.HTTP). Each records its own metrics; none flushes them (the function
// middleware does, once per invocation).

// RelayOutbox publishes bounded batches of outbox rows until the outbox is
// drained or budget is spent, and records the outbox gauges.
func (a *App) RelayOutbox(ctx context.Context, budget time.Duration) (relay.Report, error) {
	rep, err := a.Relay.Run(ctx, budget)
	a.hooks.backlog(rep)
	return rep, err
}

// AdvanceReport is the result of one batch of saga commands.
type AdvanceReport struct {
	Messages int                   `json:"messages"`
	Results  []orchestrator.Result `json:"results"`
	Failed   int                   `json:"failed"`
}

// Delivery is one saga command as the queue delivered it.
type Delivery struct {
	MessageID string // the queue's message id (named in errors)
	orchestrator.Message
}

// AdvanceSagas advances each delivery's saga by one step. It returns the
// joined errors of the messages that failed (store errors, injected
// crashes: what a redelivery can fix); every other outcome is in the report.
func (a *App) AdvanceSagas(ctx context.Context, queueName string, msgs []Delivery) (AdvanceReport, error) {
	rep := AdvanceReport{Messages: len(msgs), Results: make([]orchestrator.Result, len(msgs))}
	a.metrics.Add(metrics.QueueReceives, float64(len(msgs)), "queue", queueName)
	errs := make([]error, len(msgs))
	groups := sagaGroups(msgs)
	limit := max(1, min(a.Config.Saga.BatchConcurrency, len(groups)))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	// A panic while a message is handled is re-raised on the caller's
	// goroutine once the batch is done, as when the batch ran one message
	// after another: the function hosts recover a panicking invocation
	// (scripts/localcloud/runner), which a goroutine of ours would kill.
	var panicOnce sync.Once
	var panicked any
	for _, g := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func(g []int) {
			defer func() { <-sem; wg.Done() }()
			defer func() {
				if p := recover(); p != nil {
					panicOnce.Do(func() { panicked = p })
				}
			}()
			for _, i := range g {
				res, err := a.Advancer.Handle(ctx, msgs[i].Message)
				if err != nil {
					errs[i] = fmt.Errorf("message %s: %w", msgs[i].MessageID, err)
				}
				rep.Results[i] = res
			}
		}(g)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for _, err := range errs {
		if err != nil {
			rep.Failed++
		}
	}
	return rep, errors.Join(errs...)
}

// sagaGroups splits a batch by saga, keeping the batch's order within each
// group: messages of one saga run one after another (as one advancer would
// take them), different sagas concurrently. A body that does not decode is
// a group of its own (Handle acknowledges it as malformed).
func sagaGroups(msgs []Delivery) [][]int {
	var groups [][]int
	bySaga := map[string]int{}
	for i, m := range msgs {
		id := ""
		if cmd, err := saga.DecodeCommand(m.Body); err == nil {
			id = cmd.SagaID
		}
		if id == "" {
			groups = append(groups, []int{i})
			continue
		}
		if g, ok := bySaga[id]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		bySaga[id] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// RecoveryReport is the result of one recovery run.
type RecoveryReport struct {
	orchestrator.Report
	OutboxPurged int `json:"outbox_purged"`
	// DLQIngested messages moved from the YMQ dead-letter queues into the
	// dead-letter store; DeadLettersResolved queue entries whose saga had
	// finished meanwhile (kept, marked resolved by "system").
	DLQIngested         int `json:"dlq_ingested"`
	DeadLettersResolved int `json:"dead_letters_resolved"`
}

// idle reports whether the run found nothing to do.
func (r RecoveryReport) idle() bool {
	o := r.Report
	return o.DueSagas == 0 && o.Redriven == 0 && o.KeysReleased == 0 && o.InboxDeleted == 0 &&
		o.Reconciled == 0 && o.Errors == 0 && r.OutboxPurged == 0 && r.DLQIngested == 0 && r.DeadLettersResolved == 0
}

// Recover is the maintenance run of the recovery timer: re-drive stuck
// sagas, release stale keys, reconcile orders (orchestrator.Recovery), delete
// published outbox rows past retention, move what the YMQ dead-letter queue
// holds into the dead-letter store (so dlq_size and the DLQ-growth alert see
// it), resolve entries whose saga has finished meanwhile, then refresh the
// dead-letter gauges.
//
// Every job runs even when an earlier one failed (one saga that cannot be
// repaired must not blind the DLQ ingestion and its alert). The returned
// error is the saga recovery's; the later jobs' failures are logged, and
// retried by the next run.
func (a *App) Recover(ctx context.Context) (RecoveryReport, error) {
	rep, recErr := a.Recovery.Run(ctx)
	a.hooks.recovery(rep)
	out := RecoveryReport{Report: rep}
	var err error
	if out.OutboxPurged, err = a.purgeOutbox(ctx); err != nil {
		a.Log.Warn("outbox retention cleanup failed", "error", err)
	}
	if out.DLQIngested, err = a.Redrive.Ingest(ctx, 100); err != nil {
		a.Log.Warn("dead-letter queue ingestion failed", "error", err)
	}
	if out.DeadLettersResolved, err = a.Redrive.ResolveFinished(ctx, 100); err != nil {
		a.Log.Warn("resolving dead letters of finished sagas failed", "error", err)
	}
	a.recordDeadLetterSizes(ctx)
	if recErr != nil {
		a.Log.Error("saga recovery finished with errors", "error", recErr, "report", out)
		return out, recErr
	}
	// An idle run (the timer fires every few seconds locally) logs at debug.
	lvl := slog.LevelInfo
	if out.idle() {
		lvl = slog.LevelDebug
	}
	a.Log.Log(ctx, lvl, "saga recovery", "due_sagas", rep.DueSagas, "redriven", rep.Redriven,
		"keys_released", rep.KeysReleased, "inbox_deleted", rep.InboxDeleted,
		"reconcile_checked", rep.ReconcileChecked, "reconciled", rep.Reconciled,
		"outbox_purged", out.OutboxPurged, "dlq_ingested", out.DLQIngested,
		"dead_letters_resolved", out.DeadLettersResolved, "errors", rep.Errors)
	return out, nil
}

// purgeOutbox deletes up to 1000 published outbox rows older than the
// retention.
func (a *App) purgeOutbox(ctx context.Context) (int, error) {
	cutoff := a.Now().Add(-a.Config.Relay.Retention)
	n := 0
	err := a.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.DeletePublishedOutbox(ctx, cutoff, 1000)
		return err
	})
	return n, err
}

// OperateDeadLetters runs one operator command (JSON, as the dlqredrive
// function receives it) and counts it by action and outcome. Before reading
// or redriving (except in a dry run) it moves what waits in the YMQ
// dead-letter queues into the dead-letter store (ingest, audited), so
// operators see every failure in one place. A malformed command changes
// nothing; any error is the operator's answer (redrive.ErrorReport).
func (a *App) OperateDeadLetters(ctx context.Context, raw []byte) (any, error) {
	cmd, err := a.Redrive.DecodeCommand(raw)
	if err != nil {
		a.hooks.redriveAction("invalid", "refused")
		return nil, err
	}
	switch cmd.Action {
	case redrive.ActionList, redrive.ActionShow, redrive.ActionStats, redrive.ActionRedrive:
		// A dry run changes nothing, not even this.
		if !cmd.DryRun {
			if _, err := a.Redrive.IngestBeforeRead(ctx, cmd.Actor, 100); err != nil {
				a.Log.Warn("dead-letter queue ingestion failed; showing the store as it is", "error", err)
			}
		}
	}
	res, err := a.Redrive.Execute(ctx, cmd)
	if err != nil {
		a.hooks.redriveAction(string(cmd.Action), "error")
		return nil, err
	}
	a.hooks.redriveAction(string(cmd.Action), "ok")
	return res, nil
}
