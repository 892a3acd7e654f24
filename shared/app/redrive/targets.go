package redrive

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// ReasonRedrive is the reason of the saga.advance command a saga redrive writes.
const ReasonRedrive = saga.ReasonRedrive

// errSkip carries the reason an entry turned out ineligible inside a transaction.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return e.reason }

// resendOne redrives (or, in a dry run, plans) one entry.
func (s *Service) resendOne(ctx context.Context, actor string, d dlq.DeadLetter, forced, dry bool) Item {
	it := Item{ID: d.ID, Source: d.Source, SourceRef: d.SourceRef}
	var err error
	switch d.Source {
	case dlq.SourceQueue:
		it.Action = "send the message to queue " + d.Queue
		err = s.redriveQueue(ctx, actor, d, forced, dry)
	case dlq.SourceOutbox:
		it.Action = "set outbox row " + d.SourceRef + " back to pending"
		err = s.inTx(ctx, dry, func(ctx context.Context, tx store.Tx, now time.Time) error {
			return s.resetOutbox(ctx, tx, actor, d, forced, dry, now)
		})
	case dlq.SourceSaga:
		it.Action = "resume saga " + d.SourceRef + " compensating from its failed step"
		eventID := s.cfg.NewID()
		err = s.inTx(ctx, dry, func(ctx context.Context, tx store.Tx, now time.Time) error {
			var err error
			if it.Held, err = heldOf(ctx, tx, d); err != nil {
				return err
			}
			return s.resumeSaga(ctx, tx, actor, d, forced, dry, eventID, now)
		})
	default:
		err = apperr.New(apperr.Internal, "dead letter %s has unknown source %q", d.ID, d.Source)
	}
	var skip errSkip
	switch {
	case err == nil && dry:
		it.Outcome = OutcomeWouldRedrive
	case err == nil:
		it.Outcome = OutcomeRedriven
	case errors.As(err, &skip):
		it.Outcome, it.Reason = OutcomeSkipped, skip.reason
		it.err = apperr.New(apperr.Conflict, "dead letter %s was not redriven: %s", d.ID, skip.reason)
	default:
		it.Outcome, it.Reason, it.err = OutcomeFailed, apperr.Message(err), err
		if apperr.KindOf(err) == apperr.Internal {
			s.cfg.Log.Error("dead-letter redrive failed", "dead_letter_id", d.ID, "error", err)
		}
	}
	if it.Held != nil {
		switch it.Outcome {
		case OutcomeRedriven:
			it.HeldEffect = HeldReleased
		case OutcomeWouldRedrive:
			it.HeldEffect = HeldWouldRelease
		default:
			it.HeldEffect = HeldKept
		}
	}
	return it
}

// inTx runs fn in a read-write transaction, or in a read-only one for a dry run.
func (s *Service) inTx(ctx context.Context, dry bool, fn func(ctx context.Context, tx store.Tx, now time.Time) error) error {
	now := s.cfg.Now()
	run := s.cfg.Store.InTx
	if dry {
		run = s.cfg.Store.View
	}
	return run(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, tx, now) })
}

// fresh re-reads the entry inside the transaction and checks it is still
// the one selected and still eligible.
func (s *Service) fresh(ctx context.Context, tx store.Tx, d dlq.DeadLetter, forced bool) (dlq.DeadLetter, error) {
	cur, err := tx.GetDeadLetter(ctx, d.ID)
	if err != nil {
		return dlq.DeadLetter{}, err
	}
	if reason := ineligible(cur, forced, s.cfg.LoopLimit); reason != "" {
		return dlq.DeadLetter{}, errSkip{reason: "changed meanwhile: " + reason}
	}
	return cur, nil
}

// markRedriven records a redrive on the entry.
func markRedriven(ctx context.Context, tx store.Tx, d dlq.DeadLetter, actor string, now time.Time) error {
	prev := d.Version
	d.Status, d.RedriveCount = dlq.StatusRedriven, d.RedriveCount+1
	d.ResolvedAt, d.ResolvedBy, d.UpdatedAt, d.Version = now, actor, now, prev+1
	return tx.UpdateDeadLetter(ctx, d, prev)
}

// redriveQueue sends the message again, then marks the entry.
func (s *Service) redriveQueue(ctx context.Context, actor string, d dlq.DeadLetter, forced, dry bool) error {
	url := s.cfg.QueueURLs[d.Queue]
	if url == "" {
		return apperr.New(apperr.Internal, "no queue URL is configured for queue %q", d.Queue)
	}
	msg, err := redriveMessage(d)
	if err != nil {
		return err
	}
	if dry {
		return nil
	}
	err = s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := s.fresh(ctx, tx, d, forced)
		return err
	})
	if err != nil {
		return err
	}
	res, err := s.cfg.Queue.SendBatch(ctx, url, []queue.OutMessage{msg})
	if err == nil && (len(res) != 1 || res[0].Err != nil) {
		err = apperr.New(apperr.Transient, "queue returned no result")
		if len(res) == 1 {
			err = res[0].Err
		}
	}
	if err != nil {
		return fmt.Errorf("send to %s: %w", d.Queue, err)
	}
	now := s.cfg.Now()
	err = s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDeadLetter(ctx, d.ID)
		if err != nil {
			return err
		}
		if cur.Status != dlq.StatusOpen {
			return nil // redriven or discarded concurrently; our message is a duplicate consumers drop
		}
		return markRedriven(ctx, tx, cur, actor, now)
	})
	if err != nil {
		return apperr.Wrap(apperr.KindOf(err), err,
			"message sent to %s as %s, but the entry could not be marked redriven (it stays open)", d.Queue, res[0].MessageID)
	}
	return nil
}

// redriveMessage is the message a queue entry is sent back as: its payload
// and attributes plus redrive_of and redrive_count.
func redriveMessage(d dlq.DeadLetter) (queue.OutMessage, error) {
	attrs := make(map[string]string, len(d.Attrs)+2)
	for k, v := range d.Attrs {
		if k != AttrRedriveOf && k != AttrRedriveCount {
			attrs[k] = v
		}
	}
	if len(attrs)+2 > queue.MaxAttributes {
		return queue.OutMessage{}, apperr.New(apperr.Invalid,
			"the message has %d attributes: no room for redrive_of and redrive_count (at most %d)", len(attrs), queue.MaxAttributes)
	}
	attrs[AttrRedriveOf], attrs[AttrRedriveCount] = d.ID, strconv.Itoa(d.RedriveCount+1)
	m := queue.OutMessage{ID: "redrive", Body: string(d.Payload), Attributes: attrs}
	if err := queue.CheckMessage(m); err != nil {
		return queue.OutMessage{}, apperr.Wrap(apperr.Invalid, err, "the message cannot be sent again: %s", apperr.Message(err))
	}
	return m, nil
}

// resetOutbox sets a dead outbox row back to pending and marks the entry.
func (s *Service) resetOutbox(ctx context.Context, tx store.Tx, actor string, d dlq.DeadLetter, forced, dry bool, now time.Time) error {
	cur, err := s.fresh(ctx, tx, d, forced)
	if err != nil {
		return err
	}
	e, err := tx.GetOutbox(ctx, cur.SourceRef)
	if apperr.Is(err, apperr.NotFound) {
		return apperr.New(apperr.NotFound, "outbox row %s no longer exists", cur.SourceRef)
	}
	if err != nil {
		return err
	}
	if e.Status != outbox.StatusDead {
		return errSkip{reason: fmt.Sprintf("outbox row %s is %s, not dead", e.ID, e.Status)}
	}
	if dry {
		return nil
	}
	prev := e.Version
	e.Status, e.Attempts, e.NextAttemptAt = outbox.StatusPending, 0, now
	e.LeaseOwner, e.LeaseUntil, e.Version = "", time.Time{}, prev+1
	if err := tx.UpdateOutbox(ctx, e, prev); err != nil {
		return err
	}
	return markRedriven(ctx, tx, cur, actor, now)
}

// resumeSaga sets a failed saga back to compensating at the step whose
// compensation gave up, in a new epoch (saga.Data.Epoch + 1), writes the
// saga.advance row carrying that token, and marks the entry. The new epoch
// makes every message written before stale: without it the token
// (compensating, step, attempt 0) would repeat one the saga already had, and
// an old at-least-once copy of that compensate message would run again.
func (s *Service) resumeSaga(ctx context.Context, tx store.Tx, actor string, d dlq.DeadLetter, forced, dry bool, eventID string, now time.Time) error {
	cur, err := s.fresh(ctx, tx, d, forced)
	if err != nil {
		return err
	}
	inst, err := tx.GetSaga(ctx, cur.SourceRef)
	if apperr.Is(err, apperr.NotFound) {
		return apperr.New(apperr.NotFound, "saga %s no longer exists", cur.SourceRef)
	}
	if err != nil {
		return err
	}
	if inst.State != saga.StateFailed {
		return errSkip{reason: fmt.Sprintf("saga %s is %s, not failed", inst.ID, inst.State)}
	}
	if dry {
		return nil
	}
	prev := inst.Version
	inst.Resume(now)
	if err := tx.UpdateSaga(ctx, inst, prev); err != nil {
		return err
	}
	ev := outbox.SagaAdvance(eventID, saga.CommandFor(inst, ReasonRedrive), sagaChain(cur, inst)).Pending(s.cfg.Shards, now)
	// Unleased: the relay publishes it (the redrive dispatches nothing itself).
	if _, err := (outboxwrite.Writer{}).Write(ctx, tx, []outbox.Event{ev}, ""); err != nil {
		return err
	}
	return markRedriven(ctx, tx, cur, actor, now)
}

// sagaChain is the correlation metadata of a saga redrive's outbox row.
func sagaChain(d dlq.DeadLetter, inst saga.Instance) map[string]string {
	return outboxwrite.Chain(d.Attrs[outbox.AttrCorrelationID], d.IdempotencyKey, inst.CorrelationID,
		firstOf(inst.Data.OrderID, d.OrderID), inst.ID)
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
