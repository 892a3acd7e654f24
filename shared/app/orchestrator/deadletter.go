package orchestrator

import (
	"context"
	"maps"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// deadLetter records a failed saga for operators (kind is its error_type).
// A saga dead-lettered before (and redriven) reopens its entry with one
// more failure in the history instead of getting a second one. What the
// saga still holds (reserved units, a charge not refunded: dlq.HeldBy) is
// recorded on the entry as its dlq.AttrHeld attribute, so an operator sees
// what the failure keeps from other orders and customers.
func deadLetter(ctx context.Context, tx store.Tx, inst saga.Instance, kind string, meta map[string]string, id string, loopLimit int, now time.Time) error {
	text := inst.LastError
	payload := saga.CommandFor(inst, saga.ReasonCompensate)
	payload.State = saga.StateCompensating // what a redrive resumes
	held, err := dlq.HeldBy(ctx, tx, inst.ID)
	if err != nil {
		return err
	}
	attrs := maps.Clone(meta) // meta is the order event's too: the attribute is the entry's alone
	if attrs == nil {
		attrs = map[string]string{}
	}
	delete(attrs, dlq.AttrHeld)
	if !held.Empty() {
		attrs[dlq.AttrHeld] = held.Attr()
	}
	// dlq.Record reopens the saga's existing entry if it was redriven before
	// (and flags it once redriven LoopLimit times), so the loop guard works.
	_, err = dlq.Record(ctx, tx, dlq.DeadLetter{
		ID: id, Source: dlq.SourceSaga, SourceRef: inst.ID, Queue: outbox.DestSagaCommands,
		Payload: payload.Encode(), Attrs: attrs, ErrorType: kind, Error: text, RetryCount: inst.Attempts,
		FirstFailedAt: now, LastFailedAt: now, Status: dlq.StatusOpen,
		IdempotencyKey: meta[outbox.AttrIdempotencyKey], OrderID: inst.Data.OrderID, SagaID: inst.ID,
		CreatedAt: now, UpdatedAt: now, Version: 1,
	}, loopLimit)
	return err
}
