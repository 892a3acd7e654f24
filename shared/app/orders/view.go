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
	// RecoveryResends counts recovery's resends since the saga last moved.
	RecoveryResends int `json:"recovery_resends,omitempty"`
	// LastResend is what the saga row tells of recovery's last resend
	// since the saga last moved (nil: none). Recovery writes no step-log
	// line, so this is the only record of a resend's time.
	LastResend *ResendMark `json:"last_resend,omitempty"`
	// UnconsumedResends counts the resends in a row whose previous
	// command was not consumed (recovery backs off between them).
	UnconsumedResends int `json:"unconsumed_redrives,omitempty"`
}

// ResendMark places recovery's last resend in time. Exact: the
// resend is the saga row's last write (no advancer has taken its
// command yet), so At is its time. Otherwise an advancer wrote the row
// after it, and the resend came before At, the row's last update.
type ResendMark struct {
	At    time.Time `json:"at"`
	Exact bool      `json:"exact"`
}

// lastResend reads inst's resend mark: Data.ResendVersion is the
// version recovery's last resend wrote (0 once the saga moves).
func lastResend(inst saga.Instance) *ResendMark {
	if inst.Data.ResendVersion == 0 {
		return nil
	}
	return &ResendMark{At: inst.UpdatedAt, Exact: inst.Version == inst.Data.ResendVersion}
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
			BreakerWaits: inst.Data.Waits, RecoveryResends: inst.Data.Resends, LastResend: lastResend(*inst),
			UnconsumedResends: inst.Data.UnconsumedResends}
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
