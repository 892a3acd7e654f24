package orders

import (
	"context"
	"slices"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/transport/identity"
)

// The reads below serve operators (the console): each needs an admin
// caller (Forbidden otherwise), reads in one View, and is bounded by
// index-ordered, LIMIT-bounded queries of store.SagaRows and store.OutboxRows;
// none scans a table.

// MaxRecentScan is the most sagas (or index entries) per state RecentSagas
// and SagaCounts read.
const MaxRecentScan = 1000

// SagaStates lists every saga state in the order operators read them.
var SagaStates = []saga.State{saga.StatePending, saga.StateRunning, saga.StateCompleted,
	saga.StateCompensating, saga.StateCompensated, saga.StateFailed}

// StateCount counts the sagas of one state last updated within the last
// hour and the last day. Each order has exactly one saga, so the counts are
// also the orders' (completed: CONFIRMED, compensated: CANCELLED, failed:
// FAILED, the others: PENDING).
type StateCount struct {
	State saga.State `json:"state"`
	Hour  int        `json:"hour"`
	Day   int        `json:"day"`
	// AtLeast is set when the scan stopped at its bound inside the day:
	// the counts are lower bounds.
	AtLeast bool `json:"at_least,omitempty"`
}

// SagaCounts counts sagas by state updated within the last hour and day,
// each count reading at most limit (1..MaxRecentScan) entries of the
// (state, updated_at) index and no saga row (store.SagaRows
// CountSagasUpdatedSince). Read only. Errors: Forbidden, Invalid (limit),
// Transient.
func (s *Service) SagaCounts(ctx context.Context, caller identity.Identity, limit int) ([]StateCount, error) {
	if err := operator(caller, limit); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	hour, day := now.Add(-time.Hour), now.Add(-24*time.Hour)
	out := make([]StateCount, 0, len(SagaStates))
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		out = out[:0]
		for _, st := range SagaStates {
			c := StateCount{State: st}
			var err error
			if c.Hour, err = tx.CountSagasUpdatedSince(ctx, st, hour, limit); err != nil {
				return err
			}
			if c.Day, err = tx.CountSagasUpdatedSince(ctx, st, day, limit); err != nil {
				return err
			}
			c.AtLeast = c.Day >= limit
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// SagaRef names one saga found by RecentSagas.
type SagaRef struct {
	SagaID     string     `json:"saga_id"`
	OrderID    string     `json:"order_id"`
	CustomerID string     `json:"customer_id"`
	State      saga.State `json:"state"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// RecentSagas returns the sagas among the newest scan (1..MaxRecentScan)
// of each state whose order belongs to customerID ("" matches every
// customer), newest update first. A customer's older orders beyond that
// window are not found here; ListByCustomer finds every one. Read only.
// Errors: Forbidden, Invalid (scan), Transient.
func (s *Service) RecentSagas(ctx context.Context, caller identity.Identity, customerID string, scan int) ([]SagaRef, error) {
	if err := operator(caller, scan); err != nil {
		return nil, err
	}
	var out []SagaRef
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		out = out[:0]
		for _, st := range SagaStates {
			list, err := tx.ListSagasByState(ctx, st, time.Time{}, scan)
			if err != nil {
				return err
			}
			for _, in := range list {
				if customerID == "" || in.Data.CustomerID == customerID {
					out = append(out, SagaRef{SagaID: in.ID, OrderID: in.Data.OrderID, CustomerID: in.Data.CustomerID,
						State: in.State, UpdatedAt: in.UpdatedAt})
				}
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b SagaRef) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.SagaID, a.SagaID)
	})
	return out, err
}

// MaxCustomerPage is the most orders one ListByCustomer page holds.
const MaxCustomerPage = 100

// OrderRef names one order found by ListByCustomer.
type OrderRef struct {
	OrderID    string       `json:"order_id"`
	CustomerID string       `json:"customer_id"`
	SagaID     string       `json:"saga_id"`
	Status     order.Status `json:"status"`
	Currency   string       `json:"currency"`
	TotalMinor int64        `json:"total_minor"`
	CreatedAt  time.Time    `json:"created_at"`
}

// CustomerPage is one page of a customer's orders, newest first.
type CustomerPage struct {
	Orders []OrderRef `json:"orders"`
	// Next continues with the next older orders; zero when there are none.
	Next store.OrderCursor `json:"-"`
}

// ListByCustomer returns up to limit (1..MaxCustomerPage) orders of
// customerID, newest first (store.OrderRows.ListOrdersByCustomer, an index of
// the customer's orders: every order is found, however old), starting after
// the cursor (zero: the newest). It reads limit+1 orders, so Next is set
// only when an older order exists. Read only. Errors: Forbidden, Invalid
// (an empty customer id, limit), Transient.
func (s *Service) ListByCustomer(ctx context.Context, caller identity.Identity, customerID string, after store.OrderCursor, limit int) (CustomerPage, error) {
	if err := operator(caller, 1); err != nil {
		return CustomerPage{}, err
	}
	if customerID == "" {
		return CustomerPage{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/customer_id", Detail: "must not be empty"}},
			"a customer id is needed")
	}
	if limit < 1 || limit > MaxCustomerPage {
		return CustomerPage{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/limit", Detail: "must be between 1 and 100"}},
			"invalid page size %d", limit)
	}
	var list []order.Order
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) (err error) {
		list, err = tx.ListOrdersByCustomer(ctx, customerID, after, limit+1)
		return err
	})
	if err != nil {
		return CustomerPage{}, err
	}
	var p CustomerPage
	if len(list) > limit {
		list = list[:limit]
		p.Next = store.CursorOf(list[limit-1])
	}
	for _, o := range list {
		p.Orders = append(p.Orders, OrderRef{OrderID: o.ID, CustomerID: o.CustomerID, SagaID: o.SagaID, Status: o.Status,
			Currency: o.Currency, TotalMinor: o.TotalMinor, CreatedAt: o.CreatedAt})
	}
	return p, nil
}

// FindByKey returns the order that idempotency key key of caller scope
// (the subject that sent it) created, while the key is kept. Read only.
// Errors: Forbidden, NotFound (unknown key, or a request still in
// progress), Transient.
func (s *Service) FindByKey(ctx context.Context, caller identity.Identity, scope, key string) (View, error) {
	if err := operator(caller, 1); err != nil {
		return View{}, err
	}
	var id string
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		rec, err := tx.GetIdempotencyKey(ctx, scope, key)
		if err != nil {
			return err
		}
		id = rec.ResourceID
		return nil
	})
	if err == nil && id == "" {
		err = apperr.New(apperr.NotFound, "the key's request has not created an order")
	}
	if err != nil {
		if apperr.Is(err, apperr.NotFound) {
			return View{}, apperr.New(apperr.NotFound, "no order for this idempotency key and caller")
		}
		return View{}, err
	}
	return s.Get(ctx, caller, id)
}

// Backlog returns the outbox's pending rows (capped by the store: a count
// at the cap means at least that many) and the age of the oldest of them
// (0 when none). Read only. Errors: Forbidden, Transient.
func (s *Service) Backlog(ctx context.Context, caller identity.Identity) (pending int, oldestAge time.Duration, err error) {
	if err := operator(caller, 1); err != nil {
		return 0, 0, err
	}
	err = s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		n, oldest, err := tx.OutboxBacklog(ctx)
		pending = n
		if n > 0 && !oldest.IsZero() {
			oldestAge = max(0, s.cfg.Now().Sub(oldest))
		}
		return err
	})
	return pending, oldestAge, err
}

func operator(caller identity.Identity, scan int) error {
	if !caller.IsAdmin() {
		return apperr.New(apperr.Forbidden, "operator reads need an admin identity")
	}
	if scan < 1 || scan > MaxRecentScan {
		return apperr.Invalidf([]apperr.FieldError{{Pointer: "/scan", Detail: "must be between 1 and 1000"}},
			"invalid scan bound %d", scan)
	}
	return nil
}
