package redrive

import (
	"context"
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

// Selection chooses the entries of a redrive: by IDs, or by Filter, or All
// (every open entry of Filter.Source) — exactly one of the three, so that
// nothing is redriven "by accident". Only open entries are ever redriven;
// flagged entries (the loop guard) only when named by id with Force.
type Selection struct {
	IDs    []string
	Filter dlq.Filter
	All    bool
	// Max bounds the entries selected (default DefaultMax, at most MaxPerCall).
	Max int
	// RatePerSec paces the redrives (default DefaultRate, at most MaxRate).
	RatePerSec float64
	// DryRun selects and reports what would happen, and changes nothing
	// (except that the dry run itself is audited).
	DryRun bool
	// Force redrives flagged entries named in IDs.
	Force bool
	// Reason, optional, is recorded in the audit.
	Reason string
}

// Outcomes of one item of a redrive.
const (
	OutcomeWouldRedrive = "would_redrive" // dry run: a real run would redrive it
	OutcomeRedriven     = "redriven"
	OutcomeSkipped      = "skipped"     // not eligible (see reason); nothing done
	OutcomeFailed       = "failed"      // eligible, but the redrive failed; the entry is unchanged
	OutcomeNotReached   = "not_reached" // the call stopped (deadline) before this item
)

// Item is the outcome for one selected entry.
type Item struct {
	ID        string     `json:"id"`
	Source    dlq.Source `json:"source"`
	SourceRef string     `json:"source_ref"`
	// Action says what the redrive does (or would do) for this entry.
	Action  string `json:"action,omitempty"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// ErrorKind classifies a failure (apperr kind name).
	ErrorKind string `json:"error_kind,omitempty"`
	// Held is what the saga of a saga entry held when it was redriven (its
	// reserved units, a charge not refunded), and HeldEffect what the
	// redrive does to it (HeldReleased, HeldWouldRelease, HeldKept);
	// absent when it held nothing.
	Held       *dlq.Held `json:"held,omitempty"`
	HeldEffect string    `json:"held_effect,omitempty"`
	err        error
}

// Err returns the error of a failed or skipped item (nil otherwise).
func (it Item) Err() error { return it.err }

// Report is the outcome of a redrive.
type Report struct {
	Action       string `json:"action"`
	DryRun       bool   `json:"dry_run"`
	Selected     int    `json:"selected"`
	Redriven     int    `json:"redriven"`
	WouldRedrive int    `json:"would_redrive"`
	Skipped      int    `json:"skipped"`
	Failed       int    `json:"failed"`
	NotReached   int    `json:"not_reached"`
	// IntervalMS is the pause between two redrives (1000 / rate_per_sec).
	IntervalMS int64 `json:"interval_ms"`
	// Stopped is "deadline" when the call stopped early to stay within its
	// deadline, "canceled" when its context was cancelled during a pause.
	Stopped string `json:"stopped,omitempty"`
	// IDs are the selected entries, in order.
	IDs     []string `json:"ids"`
	Items   []Item   `json:"items"`
	AuditID string   `json:"audit_id,omitempty"`
}

// deadlineMargin is kept free before the context's deadline.
const deadlineMargin = 2 * time.Second

// Redrive brings the selected dead letters back, one at a time, paced at
// sel.RatePerSec: a queue entry's message is sent again to its source queue
// (with the attributes redrive_of and redrive_count) and then the entry is
// marked redriven (send-then-mark: a crash in between leaves the entry open
// and a second redrive sends a duplicate, which consumers deduplicate by
// event id); a dead outbox row is set back to pending and a failed saga back
// to compensating at its failed step with a matching saga.advance outbox row,
// each in one transaction with the mark. Marking increments RedriveCount and
// sets ResolvedAt/By. The call and its outcome are audited (dry runs too,
// with outcome "dry_run"). Not idempotent (a second call finds the entries
// redriven and skips them). Errors (nothing changed, nothing audited):
// Invalid (bad selection, with field errors), NotFound (unknown ids, all
// listed), Transient. Per-entry failures are reported in the items.
func (s *Service) Redrive(ctx context.Context, actor string, sel Selection) (Report, error) {
	sel, fields := s.normalize(sel)
	if err := checkActor(actor); err != nil {
		fields = append(fields, *err)
	}
	if len(fields) > 0 {
		return Report{}, apperr.Invalidf(fields, "invalid redrive selection: %s", summarize(fields))
	}
	selected, err := s.selectEntries(ctx, sel)
	if err != nil {
		return Report{}, err
	}
	interval := time.Duration(float64(time.Second) / sel.RatePerSec)
	rep := Report{Action: "redrive", DryRun: sel.DryRun, Selected: len(selected), IntervalMS: interval.Milliseconds(),
		IDs: make([]string, 0, len(selected)), Items: make([]Item, 0, len(selected))}
	forced := sel.Force && len(sel.IDs) > 0
	acted := 0
	for _, d := range selected {
		rep.IDs = append(rep.IDs, d.ID)
		if rep.Stopped != "" {
			rep.add(Item{ID: d.ID, Source: d.Source, SourceRef: d.SourceRef, Outcome: OutcomeNotReached})
			continue
		}
		if reason := ineligible(d, forced, s.cfg.LoopLimit); reason != "" {
			rep.add(skipped(d, reason))
			continue
		}
		if !sel.DryRun && acted > 0 {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < interval+deadlineMargin {
				rep.Stopped = "deadline"
				rep.add(Item{ID: d.ID, Source: d.Source, SourceRef: d.SourceRef, Outcome: OutcomeNotReached})
				continue
			}
			if err := s.cfg.Sleep(ctx, interval); err != nil {
				rep.Stopped = "canceled"
				rep.add(Item{ID: d.ID, Source: d.Source, SourceRef: d.SourceRef, Outcome: OutcomeNotReached})
				continue
			}
		}
		it := s.resendOne(ctx, actor, d, forced, sel.DryRun)
		if it.Outcome == OutcomeRedriven || it.Outcome == OutcomeFailed {
			acted++
		}
		rep.add(it)
	}
	rep.AuditID, _ = s.audit(ctx, actor, "redrive", selectionParams(sel), rep.Redriven+rep.WouldRedrive,
		rep.outcome(), rep)
	s.cfg.Log.Info("dead letters redriven", "actor", actor, "dry_run", sel.DryRun, "selected", rep.Selected,
		"redriven", rep.Redriven, "skipped", rep.Skipped, "failed", rep.Failed, "stopped", rep.Stopped)
	return rep, nil
}

func (r *Report) add(it Item) {
	if it.err != nil && it.ErrorKind == "" && it.Outcome == OutcomeFailed {
		it.ErrorKind = apperr.KindOf(it.err).String()
	}
	switch it.Outcome {
	case OutcomeRedriven:
		r.Redriven++
	case OutcomeWouldRedrive:
		r.WouldRedrive++
	case OutcomeSkipped:
		r.Skipped++
	case OutcomeFailed:
		r.Failed++
	case OutcomeNotReached:
		r.NotReached++
	}
	r.Items = append(r.Items, it)
}

// outcome is the audit outcome of the whole call.
func (r *Report) outcome() string {
	switch {
	case r.DryRun:
		return "dry_run"
	case r.Redriven > 0 && r.Failed == 0 && r.NotReached == 0:
		return "ok"
	case r.Redriven > 0:
		return "partial"
	case r.Failed > 0:
		return "failed"
	default:
		return "noop"
	}
}

func skipped(d dlq.DeadLetter, reason string) Item {
	return Item{ID: d.ID, Source: d.Source, SourceRef: d.SourceRef, Outcome: OutcomeSkipped, Reason: reason,
		err: apperr.New(apperr.Conflict, "dead letter %s was not redriven: %s", d.ID, reason)}
}

// ineligible returns why d may not be redriven now ("" if it may).
func ineligible(d dlq.DeadLetter, forced bool, loopLimit int) string {
	if d.Status != dlq.StatusOpen {
		return fmt.Sprintf("status is %s; only open entries are redriven", d.Status)
	}
	if (d.Flagged || d.RedriveCount >= loopLimit) && !forced {
		return fmt.Sprintf("flagged by the loop guard (redriven %d times and failed again): name it by id with force:true to redrive it anyway", d.RedriveCount)
	}
	return ""
}

// selectEntries reads the selection in one snapshot.
func (s *Service) selectEntries(ctx context.Context, sel Selection) ([]dlq.DeadLetter, error) {
	var out []dlq.DeadLetter
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		out = out[:0]
		if len(sel.IDs) > 0 {
			var missing []apperr.FieldError
			var names []string
			for i, id := range sel.IDs {
				d, err := tx.GetDeadLetter(ctx, id)
				if apperr.Is(err, apperr.NotFound) {
					missing = append(missing, apperr.FieldError{Pointer: fmt.Sprintf("/ids/%d", i), Detail: "no dead letter has this id"})
					names = append(names, id)
					continue
				}
				if err != nil {
					return err
				}
				out = append(out, d)
			}
			if len(missing) > 0 {
				return &apperr.Error{Kind: apperr.NotFound, Fields: missing,
					Msg: fmt.Sprintf("unknown dead-letter ids: %s; nothing was changed", joinIDs(names))}
			}
			return nil
		}
		f := sel.Filter
		f.Status = dlq.StatusOpen
		notFlagged := false
		f.Flagged = &notFlagged
		page, _, err := tx.ListDeadLetters(ctx, f, dlq.Page{Limit: sel.Max})
		out = append(out, page...)
		return err
	})
	return out, err
}

func joinIDs(ids []string) string {
	const show = 10
	if len(ids) <= show {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:show], ", ") + fmt.Sprintf(" and %d more", len(ids)-show)
}

// selectionParams is the audit form of a selection.
func selectionParams(sel Selection) map[string]any {
	p := map[string]any{"max": sel.Max, "rate_per_sec": sel.RatePerSec, "dry_run": sel.DryRun}
	if sel.Reason != "" {
		p["reason"] = sel.Reason
	}
	switch {
	case len(sel.IDs) > 0:
		p["ids"] = sel.IDs
		p["force"] = sel.Force
	case sel.All:
		p["all"] = true
		p["filter"] = filterParams(sel.Filter)
	default:
		p["filter"] = filterParams(sel.Filter)
	}
	return p
}

func filterParams(f dlq.Filter) map[string]any {
	p := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	set("source", string(f.Source))
	set("status", string(f.Status))
	set("error_type", f.ErrorType)
	set("order_id", f.OrderID)
	set("saga_id", f.SagaID)
	if !f.From.IsZero() {
		p["from"] = f.From.Format(time.RFC3339Nano)
	}
	if !f.To.IsZero() {
		p["to"] = f.To.Format(time.RFC3339Nano)
	}
	if f.Flagged != nil {
		p["flagged"] = *f.Flagged
	}
	return p
}
