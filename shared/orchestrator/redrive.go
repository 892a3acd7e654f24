package orchestrator

import (
	"context"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/outbox"
	"ordersaga/shared/saga"
	"ordersaga/shared/store"
)

// redrive gives every stuck saga (unfinished, lease free, due more than
// StuckAfter ago) a fresh saga.advance carrying its CURRENT token, in one
// transaction per saga that also bumps NextAttemptAt and the version. An old
// message still in flight for the same token and the new one race
// harmlessly: the first takes the lease and moves the token, the second is
// busy or stale.
func (r *Recovery) redrive(ctx context.Context, rep *Report, note func(error)) error {
	stuckBefore := r.now().Add(-r.stuckAfter())
	var due []saga.Instance
	err := r.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		due, err = tx.ListSagasDue(ctx, stuckBefore, r.batch())
		return err
	})
	if err != nil {
		return err
	}
	rep.DueSagas += len(due)
	rep.Redriven += r.forEach(ctx, due, r.redriveOne, note)
	return nil
}

// redriveOne re-checks one saga in a transaction and, if it is still stuck,
// writes its re-drive command.
func (r *Recovery) redriveOne(ctx context.Context, id string) (outbox.Event, bool, error) {
	eventID := r.newID()
	var ev outbox.Event
	var ok bool
	err := r.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		ok = false
		now := r.now()
		s, err := tx.GetSaga(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if s.State.Finished() || s.LeaseUntil.After(now) || s.NextAttemptAt.After(now.Add(-r.stuckAfter())) {
			return nil // it moved meanwhile
		}
		prev := s.Version
		s.NextAttemptAt, s.UpdatedAt, s.Version = now, now, prev+1
		if err := tx.UpdateSaga(ctx, s, prev); err != nil {
			return err
		}
		ev = newAdvanceEvent(eventID, r.Shards, commandFor(s, ReasonRecovery), chain(s, nil), now, now, r.owner(), r.dispatchLease())
		dispatch, err := insertEvents(ctx, tx, []outbox.Event{ev})
		if err != nil {
			return err
		}
		if len(dispatch) == 0 {
			ev.LeaseOwner = "" // written for the relay: not dispatched here
		}
		ok = true
		return nil
	})
	if apperr.Is(err, apperr.Conflict) {
		return outbox.Event{}, false, nil // an advancer took it meanwhile
	}
	if err != nil {
		// The transaction did not commit (even if the closure ran to the
		// end): its event does not exist and must not be dispatched.
		return outbox.Event{}, false, err
	}
	if ok {
		r.log().Warn("stuck saga re-driven", "saga_id", id, "order_id", ev.Metadata[outbox.AttrOrderID],
			"outbox_event_id", ev.ID)
	}
	return ev, ok, nil
}

func (r *Recovery) stuckAfter() time.Duration { return orDefault(r.StuckAfter, 2*time.Minute) }

// forEach runs one per-saga repair (redriveOne or repair) for each saga,
// notes each error, dispatches the rows they wrote for dispatch (a row
// written for the relay has no lease owner), and returns how many acted.
func (r *Recovery) forEach(ctx context.Context, sagas []saga.Instance,
	one func(context.Context, string) (outbox.Event, bool, error), note func(error)) int {
	var events []outbox.Event
	n := 0
	for _, s := range sagas {
		e, ok, err := one(ctx, s.ID)
		note(err)
		if !ok {
			continue
		}
		n++
		if e.LeaseOwner != "" {
			events = append(events, e)
		}
	}
	if len(events) > 0 && r.Dispatcher != nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r.Dispatcher.Dispatch(dctx, events)
		cancel()
	}
	return n
}
