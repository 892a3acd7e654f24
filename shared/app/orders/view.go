package orders

import (
	"context"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/transport/identity"
)

// View is the JSON representation of an order returned by the API: the
// order (as every order event carries it) with its saga and correlation.
type View struct {
	order.View
	Saga        *SagaView    `json:"saga,omitempty"`
	Correlation *Correlation `json:"correlation,omitempty"`
}

// SagaView is the saga state and step history shown with an order.
type SagaView struct {
	ID        string          `json:"id"`
	State     saga.State      `json:"state"`
	Step      string          `json:"step,omitempty"`
	Attempts  int             `json:"attempts"`
	LastError string          `json:"last_error,omitempty"`
	UpdatedAt time.Time       `json:"updated_at"`
	History   []saga.LogEntry `json:"history"`
	// BreakerWaits counts the current step's attempts refused by an open
	// circuit breaker (they spend no retry budget).
	BreakerWaits int `json:"breaker_waits,omitempty"`
	// RecoveryRedrives counts recovery's re-drives since the saga last moved.
	RecoveryRedrives int `json:"recovery_redrives,omitempty"`
	// LastRedrive is what the saga row tells of recovery's last re-drive
	// since the saga last moved (nil: none). Recovery writes no step-log
	// line, so this is the only record of a re-drive's time.
	LastRedrive *RedriveMark `json:"last_redrive,omitempty"`
	// UnconsumedRedrives counts the re-drives in a row whose previous
	// command was not consumed (recovery backs off between them).
	UnconsumedRedrives int `json:"unconsumed_redrives,omitempty"`
}

// RedriveMark places recovery's last re-drive in time. Exact: the
// re-drive is the saga row's last write (no advancer has taken its
// command yet), so At is its time. Otherwise an advancer wrote the row
// after it, and the re-drive came before At, the row's last update.
type RedriveMark struct {
	At    time.Time `json:"at"`
	Exact bool      `json:"exact"`
}

// lastRedrive reads inst's re-drive mark: Data.RedriveVersion is the
// version recovery's last re-drive wrote (0 once the saga moves).
func lastRedrive(inst saga.Instance) *RedriveMark {
	if inst.Data.RedriveVersion == 0 {
		return nil
	}
	return &RedriveMark{At: inst.UpdatedAt, Exact: inst.Version == inst.Data.RedriveVersion}
}

// Correlation is the chain that ties an order to everything it caused:
// idempotency key → order → saga (each step's outbox event id is in the
// history as message_id) → dead letter, when the saga failed.
type Correlation struct {
	IdempotencyKey string `json:"idempotency_key"`
	OrderID        string `json:"order_id"`
	SagaID         string `json:"saga_id"`
	DeadLetterID   string `json:"dead_letter_id,omitempty"`
}

// NewView renders o; inst and history are optional, steps names inst's step.
func NewView(o order.Order, inst *saga.Instance, history []saga.LogEntry, steps saga.Table) View {
	v := View{View: order.NewView(o)}
	if inst != nil {
		if history == nil {
			history = []saga.LogEntry{}
		}
		v.Saga = &SagaView{ID: inst.ID, State: inst.State, Step: steps.StepName(*inst), Attempts: inst.Attempts,
			LastError: inst.LastError, UpdatedAt: inst.UpdatedAt, History: history,
			BreakerWaits: inst.Data.Waits, RecoveryRedrives: inst.Data.Redrives, LastRedrive: lastRedrive(*inst),
			UnconsumedRedrives: inst.Data.UnconsumedRedrives}
		v.Correlation = &Correlation{IdempotencyKey: o.IdempotencyKey, OrderID: o.ID, SagaID: inst.ID}
	}
	return v
}

// Get returns order id with its saga and history to its owner or an admin.
// Anyone else gets NotFound, exactly as for a missing order, so ids cannot be probed.
func (s *Service) Get(ctx context.Context, caller identity.Identity, id string) (View, error) {
	var v View
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		o, err := tx.GetOrder(ctx, id)
		if err != nil {
			return err
		}
		if o.OwnerID != caller.Subject && !caller.IsAdmin() {
			return apperr.New(apperr.NotFound, "order %s not found", id)
		}
		var inst *saga.Instance
		var hist []saga.LogEntry
		if o.SagaID != "" {
			in, err := tx.GetSaga(ctx, o.SagaID)
			switch {
			case err == nil:
				inst = &in
				if hist, err = tx.ListSagaLog(ctx, in.ID); err != nil {
					return err
				}
			case !apperr.Is(err, apperr.NotFound):
				return err
			}
		}
		v = NewView(o, inst, hist, s.cfg.Steps)
		if inst != nil && inst.State == saga.StateFailed {
			if d, err := tx.FindDeadLetter(ctx, dlq.SourceSaga, inst.ID); err == nil {
				v.Correlation.DeadLetterID = d.ID
			}
		}
		return nil
	})
	if apperr.Is(err, apperr.NotFound) {
		return View{}, apperr.New(apperr.NotFound, "order %s not found", id)
	}
	return v, err
}
