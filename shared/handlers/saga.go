package handlers

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"ordersaga/shared/app"
	"ordersaga/shared/metrics"
	"ordersaga/shared/orchestrator"
	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
	"ordersaga/shared/yc"
)

// AdvancerReport is the sagaadvancer function's result.
type AdvancerReport struct {
	Messages int                   `json:"messages"`
	Results  []orchestrator.Result `json:"results"`
	Failed   int                   `json:"failed"`
}

// SagaAdvancer handles one Message Queue trigger batch: each message advances
// its saga by one step.
//
// What makes it fail (and so return the WHOLE batch to the queue after the
// visibility timeout, and after max_receive_count move it to the DLQ): only
// an error from the store or an injected crash — something a retry can fix.
// Everything else is acknowledged: stale, duplicate, busy, unknown-saga and
// finished-saga messages are harmless by design, and a malformed command can
// never succeed, so it is acknowledged and counted (the advancer logs it with
// its message id). Because the batch is retried as a whole, every other
// message in it runs again; the inbox and the saga token make that harmless.
func SagaAdvancer(ctx context.Context, a *app.App, raw []byte) (any, error) {
	defer a.FlushMetrics(ctx)
	ev, err := yc.DecodeQueue(raw)
	if err != nil {
		return Report(err), nil
	}
	rep := AdvancerReport{Messages: len(ev.Messages), Results: make([]orchestrator.Result, 0, len(ev.Messages))}
	a.Metrics.Add(metrics.QueueReceives, float64(len(ev.Messages)), "queue", "saga-commands")
	var errs []error
	for _, m := range ev.Messages {
		eventID := m.MessageAttributes[outbox.AttrEventID]
		if eventID == "" {
			eventID = m.MessageID
		}
		rc, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		res, err := a.Advancer.Handle(ctx, orchestrator.Message{
			EventID: eventID, Body: []byte(m.Body), Attributes: m.MessageAttributes, ReceiveCount: rc,
		})
		if err != nil {
			rep.Failed++
			errs = append(errs, fmt.Errorf("message %s: %w", m.MessageID, err))
		}
		rep.Results = append(rep.Results, res)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rep, nil
}

// RecoveryReport is the sagarecovery function's result.
type RecoveryReport struct {
	orchestrator.Report
	OutboxPurged int `json:"outbox_purged"`
	// DLQIngested messages moved from the YMQ dead-letter queues into the
	// dead-letter store; DeadLettersResolved queue entries whose saga had
	// finished meanwhile (kept, marked resolved by "system").
	DLQIngested         int `json:"dlq_ingested"`
	DeadLettersResolved int `json:"dead_letters_resolved"`
}

// SagaRecovery handles one timer firing: re-drive stuck sagas, release stale
// keys, reconcile orders, and delete published outbox rows past retention.
func SagaRecovery(ctx context.Context, a *app.App, raw []byte) (any, error) {
	defer a.FlushMetrics(ctx)
	if _, err := yc.DecodeTimer(raw); err != nil {
		return Report(err), nil
	}
	// Every job runs even when an earlier one failed (one saga that cannot
	// be repaired must not blind the DLQ ingestion and its alert); the
	// errors are returned together at the end, which marks the invocation
	// failed in monitoring.
	rep, recErr := a.Recovery.Run(ctx)
	a.RecordRecovery(rep)
	out := RecoveryReport{Report: rep}
	cutoff := a.Now().Add(-a.Config.Relay.Retention)
	err := a.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		n, err := tx.DeletePublishedOutbox(ctx, cutoff, 1000)
		out.OutboxPurged = n
		return err
	})
	if err != nil {
		a.Log.Warn("outbox retention cleanup failed", "error", err)
	}
	// Move what the YMQ dead-letter queue holds into the dead-letter store
	// (so dlq_size and the DLQ-growth alert see it), resolve entries whose
	// saga has finished meanwhile, then refresh the gauges.
	if out.DLQIngested, err = a.Redrive.Ingest(ctx, 100); err != nil {
		a.Log.Warn("dead-letter queue ingestion failed", "error", err)
	}
	if out.DeadLettersResolved, err = a.Redrive.ResolveFinished(ctx, 100); err != nil {
		a.Log.Warn("resolving dead letters of finished sagas failed", "error", err)
	}
	a.RecordDeadLetterSizes(ctx)
	if recErr != nil {
		a.Log.Error("saga recovery finished with errors", "error", recErr, "report", out)
		return nil, recErr
	}
	return out, nil
}
