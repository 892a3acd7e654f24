package orchestrator

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/text"
)

// resend gives every stuck saga a fresh saga.advance carrying its CURRENT
// token, in one transaction per saga that also bumps NextAttemptAt and the
// version. A saga is stuck when it is unfinished, its lease is free, and
// either
//
//   - an advancer took its lease and let it lapse without saving (the
//     advancer crashed mid-step): nothing else will resume it until the
//     queue redelivers the message, which may be a whole visibility timeout
//     later, so it is resent at once; or
//   - it has been due for more than StuckAfter (its message was lost, is
//     held by a consumer that died before taking the lease, or still waits
//     behind a backlog).
//
// An old message still in flight for the same token and the new one race
// harmlessly: the first takes the lease and moves the token, the second is
// busy or stale.
//
// Only a resend whose previous command was consumed counts towards
// MaxResends (see consumed). One whose previous command still waits puts
// the next resend off twice as long as the last (StuckAfter, 2×, 4×, up
// to maxUnconsumedShift doublings), so a backlogged queue gets few
// duplicates; after MaxWait without a consumed command the saga is given up.
func (r *Recovery) resend(ctx context.Context, rep *Report, due []saga.Instance, note func(error)) {
	rep.DueSagas += len(due)
	r.forEach(ctx, due, func(ctx context.Context, id string) ([]outbox.Event, bool, error) {
		dispatch, ok, gaveUp, err := r.resendOne(ctx, id)
		switch {
		case gaveUp:
			rep.GaveUp++
		case ok:
			rep.Resent++
		}
		return dispatch, ok, err
	}, note)
}

// listStuck lists the sagas to resend at now: due and lease free now,
// oldest NextAttemptAt first (the sagas due for longer than StuckAfter and
// the abandoned leases, whose NextAttemptAt is the time their step became
// due, come first), filtered by stuck.
func (r *Recovery) listStuck(ctx context.Context, tx store.Tx, now time.Time) ([]saga.Instance, error) {
	list, err := tx.ListSagasDue(ctx, now, r.c.BatchSize)
	var due []saga.Instance
	for _, s := range list {
		if r.stuck(s, now) {
			due = append(due, s)
		}
	}
	return due, err
}

// stuck reports whether recovery should resend s at now (see resend).
func (r *Recovery) stuck(s saga.Instance, now time.Time) bool {
	if s.State.Finished() || s.LeaseUntil.After(now) {
		return false
	}
	return s.LeaseOwner != "" || !s.NextAttemptAt.After(now.Add(-r.c.StuckAfter))
}

// maxUnconsumedShift caps the doubling of the resend interval of a saga
// whose resends are not consumed: StuckAfter × 2^4 (8 min by default).
const maxUnconsumedShift = 4

// consumed reports whether the command of s's last resend (or, before
// any, of its last transition) was consumed: an advancer wrote the saga
// since (took its lease, released it) — a lease still set is such a write —
// or the queue gave up on a command of the saga since: an open queue dead
// letter of it failed after the saga was last written (the command was
// received max_receive_count times and never acknowledged, a poison
// message). The first resend after a transition is not counted on the
// saga row alone: whether the transition's own command was consumed is
// unknown.
func consumed(ctx context.Context, tx store.Tx, s saga.Instance) (bool, error) {
	if s.LeaseOwner != "" || (s.Data.ResendVersion != 0 && s.Version != s.Data.ResendVersion) {
		return true, nil
	}
	dead, _, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: dlq.SourceQueue, Status: dlq.StatusOpen, SagaID: s.ID, From: s.UpdatedAt},
		dlq.Page{Limit: 1})
	return len(dead) > 0, err
}

// resendOne re-checks one saga in a transaction and, if it is still stuck,
// writes its resend command — or, once the saga has been resent
// MaxResends times after consumed commands without moving, or its commands
// stayed unconsumed for MaxWait, fails it (see giveUp). gaveUp reports the
// latter.
func (r *Recovery) resendOne(ctx context.Context, id string) (dispatch []outbox.Event, ok, gaveUp bool, err error) {
	ids := ids{advance: r.c.NewID(), orderEvent: r.c.NewID(), deadLetter: r.c.NewID()}
	var orderID, why string
	var counts saga.Data
	err = r.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		ok, gaveUp, dispatch, why = false, false, nil, ""
		now := r.now()
		s, err := tx.GetSaga(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !r.stuck(s, now) {
			return nil // it moved meanwhile
		}
		orderID = s.Data.OrderID
		var events []outbox.Event
		used, err := consumed(ctx, tx, s)
		if err != nil {
			return err
		}
		if why = r.giveUpReason(&s, used, now); why != "" {
			if events, err = r.giveUp(ctx, tx, s, why, ids, now); err != nil {
				return err
			}
			gaveUp = true
		} else {
			if events, err = r.resendIn(ctx, tx, &s, ids, now); err != nil {
				return err
			}
			counts = s.Data
		}
		if dispatch, err = r.out.Write(ctx, tx, events, ""); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if apperr.Is(err, apperr.Conflict) {
		return nil, false, false, nil // an advancer took it meanwhile
	}
	if err != nil {
		// The transaction did not commit (even if the closure ran to the
		// end): its events do not exist and must not be dispatched.
		return nil, false, false, err
	}
	switch {
	case gaveUp:
		r.c.Log.Error("stuck saga failed; dead letter written",
			"saga_id", id, "order_id", orderID, "error_type", ErrorTypeStuck, "reason", why)
	case ok:
		r.c.Log.Warn("stuck saga resent", "saga_id", id, "order_id", orderID,
			"resends", counts.Resends, "unconsumed_resends", counts.UnconsumedResends)
	}
	return dispatch, ok, gaveUp, nil
}

// resendIn records the resend of s at now in tx and returns its command
// row: due now, or StuckAfter × 2^n from now after n resends in a row whose
// commands were not consumed.
func (r *Recovery) resendIn(ctx context.Context, tx store.Tx, s *saga.Instance, ids ids, now time.Time) ([]outbox.Event, error) {
	prev := s.Version
	next := now
	if n := s.Data.UnconsumedResends; n > 0 {
		next = now.Add(r.c.StuckAfter<<min(n, maxUnconsumedShift) - r.c.StuckAfter)
	}
	s.Resent(next, now)
	if err := tx.UpdateSaga(ctx, *s, prev); err != nil {
		return nil, err
	}
	return []outbox.Event{newAdvanceEvent(ids.advance, r.c.Shards, saga.CommandFor(*s, saga.ReasonRecovery), chain(*s, nil), now, now, r.c.Owner, r.c.DispatchLease)}, nil
}

// giveUpReason updates s's resend counts for one more resend at now
// (used: the previous command was consumed) and returns why recovery gives
// s up instead ("" to resend it): MaxResends consumed resends without
// a transition, or no command consumed for MaxWait since the first
// unconsumed one became due.
func (r *Recovery) giveUpReason(s *saga.Instance, used bool, now time.Time) string {
	d := &s.Data
	if used {
		d.UnconsumedResends, d.WaitingSinceUnixMilli = 0, 0
		if d.Resends >= r.c.MaxResends {
			return fmt.Sprintf("the saga did not advance after %d resends whose commands were consumed", d.Resends)
		}
		d.Resends++
		return ""
	}
	if d.WaitingSinceUnixMilli == 0 {
		d.WaitingSinceUnixMilli = s.NextAttemptAt.UnixMilli()
	}
	if waited := now.Sub(time.UnixMilli(d.WaitingSinceUnixMilli)); waited >= r.c.MaxWait {
		return fmt.Sprintf("no command of the saga was consumed for %s (%d resends)", waited.Round(time.Second), d.UnconsumedResends)
	}
	d.UnconsumedResends++
	return ""
}

// giveUp ends a saga that recovery could not make advance: the saga fails
// (it is left at its step, so a dead-letter redrive compensates from that
// step backwards, the step itself included: its outcome is unknown), the
// order is FAILED with an order.failed event, and a saga dead letter with
// error_type "stuck" is written. It returns the order event to insert, if any.
func (r *Recovery) giveUp(ctx context.Context, tx store.Tx, s saga.Instance, why string, id ids, now time.Time) ([]outbox.Event, error) {
	prev := s.Version
	s.Abandon(text.Cut(fmt.Sprintf("recovery gave up at %s: %s", r.c.Steps.Table().StepName(s), why), maxErrorText), now)
	meta := chain(s, nil)
	change, err := failOrder(ctx, tx, s, s.LastError, now)
	if err != nil {
		return nil, err
	}
	if err := deadLetter(ctx, tx, s, ErrorTypeStuck, meta, id.deadLetter, r.c.LoopLimit, now); err != nil {
		return nil, err
	}
	if err := tx.UpdateSaga(ctx, s, prev); err != nil {
		return nil, err
	}
	if change == nil {
		return nil, nil
	}
	e, err := newOrderEvent(id.orderEvent, r.c.Shards, change.eventType, change.order, meta, now, r.c.Owner, r.c.DispatchLease)
	if err != nil {
		return nil, err
	}
	return []outbox.Event{e}, nil
}

// ErrorTypeStuck is the error_type of the dead letter of a saga that
// recovery gave up on (and the dlq_additions_total label it is counted under).
const ErrorTypeStuck = "stuck"

// forEach runs one per-saga repair (resendOne or repair) for each saga,
// notes each error, dispatches the rows they wrote for dispatch (those
// the outbox writer's Write returned), and returns how many acted.
func (r *Recovery) forEach(ctx context.Context, sagas []saga.Instance,
	one func(context.Context, string) ([]outbox.Event, bool, error), note func(error)) int {
	var events []outbox.Event
	n := 0
	for _, s := range sagas {
		dispatch, ok, err := one(ctx, s.ID)
		note(err)
		if !ok {
			continue
		}
		n++
		events = append(events, dispatch...)
	}
	r.out.Dispatch(ctx, events)
	return n
}
