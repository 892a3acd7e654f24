package redrive

import (
	"context"
	"encoding/json"
	"slices"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// MaxPageLimit is the largest page a List returns.
const MaxPageLimit = 1000

// sagaLogTail is how many of a saga's newest step-log lines Show returns.
const sagaLogTail = 50

// List returns one page of dead letters matching f, newest failure first.
// p.Limit 0 means 50. Read only, not audited. Errors: Invalid (bad limit or
// cursor), Transient.
func (s *Service) List(ctx context.Context, f dlq.Filter, p dlq.Page) (ListResult, error) {
	if p.Limit < 0 || p.Limit > MaxPageLimit {
		return ListResult{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/limit",
			Detail: "must be between 1 and 1000"}}, "invalid page limit %d", p.Limit)
	}
	var page []dlq.DeadLetter
	var next string
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		page, next, err = tx.ListDeadLetters(ctx, f, p)
		return err
	})
	if err != nil {
		return ListResult{}, err
	}
	out := ListResult{Entries: make([]Entry, 0, len(page)), NextCursor: next}
	for _, d := range page {
		out.Entries = append(out.Entries, NewEntry(d))
	}
	return out, nil
}

// Show returns one dead letter with its payload, failure history,
// correlation chain, the current state of its saga or outbox row, and the
// recent audit records that touched it. Read only. Errors: NotFound,
// Transient.
func (s *Service) Show(ctx context.Context, id string) (Detail, error) {
	var out Detail
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDeadLetter(ctx, id)
		if err != nil {
			return err
		}
		out = Detail{Entry: NewEntry(d), Payload: rawJSON(d.Payload), Attributes: d.Attrs, History: d.History}
		if out.History == nil {
			out.History = []dlq.Failure{}
		}
		if err := related(ctx, tx, d, s.cfg.Steps, &out); err != nil {
			return err
		}
		recent, err := tx.ListAudit(ctx, showAuditScan)
		if err != nil {
			return err
		}
		out.Audit = []Audit{}
		for _, a := range recent {
			if touches(a, d.ID) {
				out.Audit = append(out.Audit, NewAudit(a))
			}
		}
		return nil
	})
	if err != nil {
		return Detail{}, err
	}
	return out, nil
}

// related fills the saga and outbox views of a detail.
func related(ctx context.Context, tx store.Tx, d dlq.DeadLetter, steps saga.Table, out *Detail) error {
	sagaID := d.SagaID
	if d.Source == dlq.SourceSaga {
		sagaID = d.SourceRef
	}
	if sagaID != "" {
		inst, err := tx.GetSaga(ctx, sagaID)
		switch {
		case err == nil:
			out.Saga = &SagaView{ID: inst.ID, State: inst.State, Step: inst.Step, StepName: steps.StepName(inst),
				Attempts: inst.Attempts, LastError: inst.LastError, UpdatedAt: inst.UpdatedAt}
			log, err := tx.ListSagaLog(ctx, sagaID)
			if err != nil {
				return err
			}
			out.SagaLog = log[max(0, len(log)-sagaLogTail):]
		case !apperr.Is(err, apperr.NotFound):
			return err
		}
	}
	held, err := heldOf(ctx, tx, d)
	if err != nil {
		return err
	}
	out.Held = held
	if d.Source == dlq.SourceOutbox {
		e, err := tx.GetOutbox(ctx, d.SourceRef)
		switch {
		case err == nil:
			out.Outbox = &OutboxView{ID: e.ID, EventType: e.EventType, Destination: e.Destination,
				Status: string(e.Status), Attempts: e.Attempts, LastError: e.LastError, CreatedAt: e.CreatedAt}
		case !apperr.Is(err, apperr.NotFound):
			return err
		}
	}
	return nil
}

// auditTargets is the part of every audit detail that names the entries
// the action touched.
type auditTargets struct {
	IDs []string `json:"ids"`
}

func touches(a dlq.AuditRecord, id string) bool {
	var t auditTargets
	if json.Unmarshal(a.Detail, &t) != nil {
		return false
	}
	return slices.Contains(t.IDs, id)
}

// Stats counts dead letters by source, status and error type, and the
// messages still waiting in each dead-letter queue. Read only. Errors:
// Transient.
func (s *Service) Stats(ctx context.Context) (Stats, error) {
	st := Stats{BySource: map[string]int{}, ByStatus: map[string]int{}, ByErrorType: map[string]int{},
		OpenBySource: map[string]int{}}
	p := dlq.Page{Limit: MaxPageLimit}
	for {
		var page []dlq.DeadLetter
		err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			page, p.Cursor, err = tx.ListDeadLetters(ctx, dlq.Filter{}, p)
			return err
		})
		if err != nil {
			return Stats{}, err
		}
		for _, d := range page {
			st.Total++
			st.BySource[string(d.Source)]++
			st.ByStatus[string(d.Status)]++
			st.ByErrorType[d.ErrorType]++
			if d.Status == dlq.StatusOpen {
				st.OpenBySource[string(d.Source)]++
			}
			if d.Flagged {
				st.Flagged++
			}
		}
		if p.Cursor == "" {
			break
		}
		if st.Total >= statsScanLimit {
			st.Truncated = true
			break
		}
	}
	if s.cfg.Queue != nil && len(s.cfg.DLQs) > 0 {
		st.NotIngested = map[string]int{}
		for _, name := range sortedKeys(s.cfg.DLQs) {
			url := s.cfg.QueueURLs[name]
			if url == "" {
				continue
			}
			visible, inFlight, err := s.cfg.Queue.Depth(ctx, url)
			if err != nil {
				s.cfg.Log.Warn("dead-letter queue depth unavailable", "queue", name, "error", err)
				continue
			}
			st.NotIngested[name] = visible + inFlight
		}
	}
	return st, nil
}

// MaxAuditLimit is the most audit records RecentAudit returns.
const MaxAuditLimit = 1000

// RecentAudit returns up to limit (1..1000; 0 means 50) audit records,
// newest first. Read only. Errors: Invalid (bad limit), Transient.
func (s *Service) RecentAudit(ctx context.Context, limit int) ([]Audit, error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > MaxAuditLimit {
		return nil, apperr.Invalidf([]apperr.FieldError{{Pointer: "/limit", Detail: "must be between 1 and 1000"}},
			"invalid audit limit %d", limit)
	}
	var recs []dlq.AuditRecord
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		recs, err = tx.ListAudit(ctx, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Audit, 0, len(recs))
	for _, a := range recs {
		out = append(out, NewAudit(a))
	}
	return out, nil
}
