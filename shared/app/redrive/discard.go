package redrive

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// Outcomes of one item of a discard, delete or purge.
const (
	OutcomeDiscarded        = "discarded"
	OutcomeDeleted          = "deleted" // soft: the entry is discarded and kept
	OutcomeAlreadyDiscarded = "already_discarded"
	OutcomePurged           = "purged"
	OutcomeWouldPurge       = "would_purge"
)

// ChangeItem is the outcome for one entry of a discard, delete or purge.
type ChangeItem struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	// Held is what the saga of a discarded saga entry holds (its reserved
	// units, a charge not refunded) and HeldEffect says it stays held
	// (HeldKept); absent when it holds nothing.
	Held       *dlq.Held `json:"held,omitempty"`
	HeldEffect string    `json:"held_effect,omitempty"`
}

// ChangeReport is the outcome of a discard, delete or purge.
type ChangeReport struct {
	Action string `json:"action"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Changed counts the entries changed (or that would be, in a dry run).
	Changed int          `json:"changed"`
	IDs     []string     `json:"ids"`
	Items   []ChangeItem `json:"items"`
	AuditID string       `json:"audit_id,omitempty"`
}

// Discard marks entries discarded: they stay in the store (for audit) and
// are never redriven; only Purge removes them, later. Entries already
// discarded are left as they are (idempotent). All ids are checked first:
// with an unknown id nothing changes. Audited with the reason. Errors:
// Invalid (bad ids, actor or reason), NotFound (unknown ids), Transient.
func (s *Service) Discard(ctx context.Context, actor string, ids []string, reason string) (ChangeReport, error) {
	fields := checkIDs(ids, "/ids", true)
	if err := checkActor(actor); err != nil {
		fields = append(fields, *err)
	}
	if reason == "" {
		fields = append(fields, apperr.FieldError{Pointer: "/reason", Detail: "say why the entries are discarded"})
	} else if err := checkText(reason, "/reason", maxReason); err != nil {
		fields = append(fields, *err)
	}
	if len(fields) > 0 {
		return ChangeReport{}, apperr.Invalidf(fields, "invalid discard: %s", summarize(fields))
	}
	return s.discard(ctx, actor, "discard", ids, reason, OutcomeDiscarded)
}

// Delete is the soft delete of the admin API: the entry is discarded (kept,
// never removed) and the audit says "deleted". Idempotent. Errors: Invalid,
// NotFound, Transient.
func (s *Service) Delete(ctx context.Context, actor, id string) (ChangeReport, error) {
	fields := checkIDs([]string{id}, "/id", true)
	if err := checkActor(actor); err != nil {
		fields = append(fields, *err)
	}
	if len(fields) > 0 {
		return ChangeReport{}, apperr.Invalidf(fields, "invalid delete: %s", summarize(fields))
	}
	return s.discard(ctx, actor, "delete", []string{id}, "deleted by "+actor, OutcomeDeleted)
}

func (s *Service) discard(ctx context.Context, actor, action string, ids []string, reason, outcome string) (ChangeReport, error) {
	rep := ChangeReport{Action: action, IDs: ids}
	err := s.inTx(ctx, false, func(ctx context.Context, tx store.Tx, now time.Time) error {
		rep.Changed, rep.Items = 0, rep.Items[:0]
		entries, err := getAll(ctx, tx, ids)
		if err != nil {
			return err
		}
		// What the entries' sagas hold is read before anything is written.
		held := make([]*dlq.Held, len(entries))
		for i, d := range entries {
			if held[i], err = heldOf(ctx, tx, d); err != nil {
				return err
			}
		}
		for i, d := range entries {
			item := ChangeItem{ID: d.ID, Outcome: outcome, Held: held[i]}
			if item.Held != nil {
				item.HeldEffect = HeldKept
			}
			if d.Status == dlq.StatusDiscarded {
				item.Outcome = OutcomeAlreadyDiscarded
				rep.Items = append(rep.Items, item)
				continue
			}
			prev := d.Version
			d.Status, d.ResolvedAt, d.ResolvedBy, d.UpdatedAt, d.Version = dlq.StatusDiscarded, now, actor, now, prev+1
			if err := tx.UpdateDeadLetter(ctx, d, prev); err != nil {
				return err
			}
			if err := discardOutboxRow(ctx, tx, d); err != nil {
				return err
			}
			rep.Changed++
			rep.Items = append(rep.Items, item)
		}
		return nil
	})
	if err != nil {
		return ChangeReport{}, err
	}
	out := outcome
	if rep.Changed == 0 {
		out = "noop"
	}
	rep.AuditID, _ = s.audit(ctx, actor, action, map[string]any{"ids": ids, "reason": reason}, rep.Changed, out, rep)
	return rep, nil
}

// discardOutboxRow marks the dead outbox row of an outbox dead letter
// discarded, in the discard's transaction: a dead order event blocks the
// later events of its order (outbox.StatusDiscarded), and an operator who
// gives it up lets them go. Other sources, and rows that are no longer dead
// (redriven and published, or gone), are left alone.
func discardOutboxRow(ctx context.Context, tx store.Tx, d dlq.DeadLetter) error {
	if d.Source != dlq.SourceOutbox {
		return nil
	}
	e, err := tx.GetOutbox(ctx, d.SourceRef)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil || e.Status != outbox.StatusDead {
		return err
	}
	prev := e.Version
	e.Status, e.LeaseOwner, e.LeaseUntil, e.Version = outbox.StatusDiscarded, "", time.Time{}, prev+1
	return tx.UpdateOutbox(ctx, e, prev)
}

// getAll reads the entries named by ids; NotFound naming every missing id.
func getAll(ctx context.Context, tx store.Tx, ids []string) ([]dlq.DeadLetter, error) {
	out := make([]dlq.DeadLetter, 0, len(ids))
	var missing []apperr.FieldError
	var names []string
	for i, id := range ids {
		d, err := tx.GetDeadLetter(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			missing = append(missing, apperr.FieldError{Pointer: fmt.Sprintf("/ids/%d", i), Detail: "no dead letter has this id"})
			names = append(names, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if len(missing) > 0 {
		return nil, &apperr.Error{Kind: apperr.NotFound, Fields: missing,
			Msg: fmt.Sprintf("unknown dead-letter ids: %s; nothing was changed", joinIDs(names))}
	}
	return out, nil
}

// purgeScanPages bounds the pages Purge reads to find old discarded entries.
const purgeScanPages = 50

// Purge deletes for good up to max (default DefaultMax) discarded entries
// whose last failure and last update are both older than olderThan (at
// least MinPurgeAge). Only discarded entries are ever purged. A dry run
// lists them and deletes nothing. Audited (dry runs too). Errors: Invalid,
// Transient.
func (s *Service) Purge(ctx context.Context, actor string, olderThan time.Duration, max int, dryRun bool) (ChangeReport, error) {
	var fields []apperr.FieldError
	if olderThan < MinPurgeAge {
		fields = append(fields, apperr.FieldError{Pointer: "/older_than", Detail: "must be at least 24h"})
	}
	if max == 0 {
		max = min(DefaultMax, s.cfg.MaxPerCall)
	}
	if max < 1 || max > s.cfg.MaxPerCall {
		fields = append(fields, apperr.FieldError{Pointer: "/max", Detail: fmt.Sprintf("must be between 1 and %d", s.cfg.MaxPerCall)})
	}
	if err := checkActor(actor); err != nil {
		fields = append(fields, *err)
	}
	if len(fields) > 0 {
		return ChangeReport{}, apperr.Invalidf(fields, "invalid purge: %s", summarize(fields))
	}
	cutoff := s.cfg.Now().Add(-olderThan)
	ids, err := s.purgeable(ctx, cutoff, max)
	if err != nil {
		return ChangeReport{}, err
	}
	rep := ChangeReport{Action: "purge", DryRun: dryRun, IDs: ids, Items: make([]ChangeItem, 0, len(ids))}
	if dryRun {
		for _, id := range ids {
			rep.Items = append(rep.Items, ChangeItem{ID: id, Outcome: OutcomeWouldPurge})
		}
		rep.Changed = len(ids)
	} else if len(ids) > 0 {
		err = s.inTx(ctx, false, func(ctx context.Context, tx store.Tx, _ time.Time) error {
			rep.Changed, rep.Items = 0, rep.Items[:0]
			for _, id := range ids {
				d, err := tx.GetDeadLetter(ctx, id)
				if apperr.Is(err, apperr.NotFound) || (err == nil && !oldDiscarded(d, cutoff)) {
					continue // gone or changed meanwhile
				}
				if err != nil {
					return err
				}
				if err := tx.DeleteDeadLetter(ctx, id); err != nil {
					return err
				}
				rep.Changed++
				rep.Items = append(rep.Items, ChangeItem{ID: id, Outcome: OutcomePurged})
			}
			return nil
		})
		if err != nil {
			return ChangeReport{}, err
		}
	}
	outcome := "ok"
	switch {
	case dryRun:
		outcome = "dry_run"
	case rep.Changed == 0:
		outcome = "noop"
	}
	params := map[string]any{"older_than": olderThan.String(), "max": max, "dry_run": dryRun}
	rep.AuditID, _ = s.audit(ctx, actor, "purge", params, rep.Changed, outcome, rep)
	return rep, nil
}

func oldDiscarded(d dlq.DeadLetter, cutoff time.Time) bool {
	return d.Status == dlq.StatusDiscarded && d.LastFailedAt.Before(cutoff) && d.UpdatedAt.Before(cutoff)
}

// purgeable lists up to max ids of discarded entries older than cutoff.
func (s *Service) purgeable(ctx context.Context, cutoff time.Time, max int) ([]string, error) {
	ids := []string{}
	p := dlq.Page{Limit: MaxPageLimit}
	for i := 0; i < purgeScanPages && len(ids) < max; i++ {
		var page []dlq.DeadLetter
		err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			page, p.Cursor, err = tx.ListDeadLetters(ctx, dlq.Filter{Status: dlq.StatusDiscarded, To: cutoff}, p)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, d := range page {
			if len(ids) < max && oldDiscarded(d, cutoff) {
				ids = append(ids, d.ID)
			}
		}
		if p.Cursor == "" {
			break
		}
	}
	return ids, nil
}
