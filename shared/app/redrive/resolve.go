package redrive

import (
	"context"
	"fmt"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// ActorSystem is the actor of housekeeping actions in the audit.
const ActorSystem = "system"

// ResolveFinished marks open queue dead letters, and open outbox dead
// letters of saga.advance rows (destination saga-commands), as resolved when
// the saga their message was about has finished meanwhile (recovery resent it, or
// another message finished it). Redriving such a message could only be
// acknowledged as "finished", so nothing is lost; the entry is kept, marked
// resolved by "system", and the batch is audited. This removes the noise a
// failed trigger batch causes: the whole batch returns to the queue, so
// healthy messages can reach the DLQ together with a poison one.
//
// Outbox dead letters of order events are never resolved this way: those
// events must still reach their consumers, whatever the saga did.
//
// It looks at up to max open entries of each source (newest first) and
// returns how many it resolved. Errors: those of the store.
func (s *Service) ResolveFinished(ctx context.Context, max int) (int, error) {
	if max <= 0 {
		max = DefaultMax
	}
	var open []dlq.DeadLetter
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		open = open[:0]
		for _, src := range []dlq.Source{dlq.SourceQueue, dlq.SourceOutbox} {
			list, _, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: src, Status: dlq.StatusOpen}, dlq.Page{Limit: max})
			if err != nil {
				return err
			}
			open = append(open, list...)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var resolved []string
	for _, d := range open {
		if d.SagaID == "" || !resolvable(d) {
			continue
		}
		ok, err := s.resolveIfFinished(ctx, d.ID)
		if err != nil {
			return len(resolved), err
		}
		if ok {
			resolved = append(resolved, d.ID)
		}
	}
	if len(resolved) > 0 {
		_, _ = s.audit(ctx, ActorSystem, "auto_resolve", map[string]any{"reason": "saga already finished"},
			len(resolved), "resolved", map[string]any{"ids": resolved})
	}
	return len(resolved), nil
}

func (s *Service) resolveIfFinished(ctx context.Context, id string) (bool, error) {
	done := false
	err := s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		done = false
		d, err := tx.GetDeadLetter(ctx, id)
		if err != nil {
			return err
		}
		if d.Status != dlq.StatusOpen || !resolvable(d) {
			return nil
		}
		sg, err := tx.GetSaga(ctx, d.SagaID)
		if apperr.Is(err, apperr.NotFound) || (err == nil && !sg.State.Finished()) {
			return nil
		}
		if err != nil {
			return err
		}
		now := s.cfg.Now()
		prev := d.Version
		d.Status, d.ResolvedAt, d.ResolvedBy = dlq.StatusResolved, now, fmt.Sprintf("%s: saga %s", ActorSystem, sg.State)
		d.UpdatedAt, d.Version = now, prev+1
		if err := tx.UpdateDeadLetter(ctx, d, prev); err != nil {
			return err
		}
		done = true
		return nil
	})
	if apperr.Is(err, apperr.Conflict) || apperr.Is(err, apperr.NotFound) {
		return false, nil // changed meanwhile; the next run looks again
	}
	return done, err
}

// resolvable: a queue entry (a saga command), or an outbox entry of a saga
// command row; an outbox entry of an order event must still be published.
func resolvable(d dlq.DeadLetter) bool {
	return d.Source == dlq.SourceQueue || (d.Source == dlq.SourceOutbox && d.Queue == outbox.DestSagaCommands)
}
