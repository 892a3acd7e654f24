package handlers

import (
	"context"
	"strconv"

	"ordersaga/shared/app/jobs/maintenance"
	"ordersaga/shared/app/jobs/sagabatch"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
)

// AdvancerReport is the sagaadvancer function's result.
type AdvancerReport = sagabatch.Report

// sagaAdvancer handles one Message Queue trigger batch: each message advances
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
func sagaAdvancer(ctx context.Context, a *app.App, raw []byte) (any, error) {
	ev, err := yc.DecodeQueue(raw)
	if err != nil {
		return Report(err), nil
	}
	msgs := make([]sagabatch.Delivery, len(ev.Messages))
	for i, m := range ev.Messages {
		eventID := m.MessageAttributes[outbox.AttrEventID]
		if eventID == "" {
			eventID = m.MessageID
		}
		rc, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		msgs[i] = sagabatch.Delivery{MessageID: m.MessageID, Message: orchestrator.Message{
			EventID: eventID, Body: []byte(m.Body), Attributes: m.MessageAttributes, ReceiveCount: rc,
		}}
	}
	rep, err := a.Commands.AdvanceSagas.Run(ctx, outbox.DestSagaCommands, msgs)
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// RecoveryReport is the sagarecovery function's result.
type RecoveryReport = maintenance.Report

// sagaRecovery handles one timer firing: the maintenance run of
// App.Commands.Recover (resend stuck sagas, release stale keys, reconcile orders,
// trim the outbox, ingest and resolve dead letters, refresh their gauges).
// An error marks the invocation failed in monitoring.
func sagaRecovery(ctx context.Context, a *app.App, raw []byte) (any, error) {
	if _, err := yc.DecodeTimer(raw); err != nil {
		return Report(err), nil
	}
	rep, err := a.Commands.Recover.Run(ctx)
	if err != nil {
		return nil, err
	}
	return rep, nil
}
