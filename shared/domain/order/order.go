// Package order holds the Order aggregate: items, money in minor units,
// statuses and the validation of incoming order requests.
package order

import (
	"time"
)

// Status is an order's lifecycle status.
type Status string

// Order statuses. PENDING is set at creation; the saga moves it to CONFIRMED
// or CANCELLED, or to FAILED when a compensation gave up.
const (
	StatusPending   Status = "PENDING"
	StatusConfirmed Status = "CONFIRMED"
	StatusCancelled Status = "CANCELLED"
	StatusFailed    Status = "FAILED"
)

// Terminal reports whether no further transition is expected.
func (s Status) Terminal() bool {
	return s == StatusConfirmed || s == StatusCancelled || s == StatusFailed
}

// Item is one line of an order. Money is always an integer count of the
// currency's minor units (kopecks for RUB), never a float.
type Item struct {
	SKU            string `json:"sku"`
	Quantity       int64  `json:"quantity"`
	UnitPriceMinor int64  `json:"unit_price_minor"`
}

// Order is the aggregate persisted by the store.
type Order struct {
	ID         string    `json:"id"`
	OwnerID    string    `json:"-"` // caller subject that created the order; decides who may read it
	CustomerID string    `json:"customer_id"`
	SagaID     string    `json:"saga_id,omitempty"`
	Status     Status    `json:"status"`
	Currency   string    `json:"currency"`
	Items      []Item    `json:"items"`
	TotalMinor int64     `json:"total_minor"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Version increases by one on every update (monotonic reads, optimistic concurrency).
	Version int64 `json:"version"`
	// IdempotencyKey is the key of the request that created the order (correlation chain).
	IdempotencyKey string `json:"-"`
	// StatusReason explains CANCELLED / FAILED (e.g. "out of stock: sku-out").
	StatusReason string `json:"status_reason,omitempty"`
}

// New builds a PENDING order from a validated request.
func New(id, ownerID, idemKey string, req Request, now time.Time) Order {
	items := make([]Item, len(req.Items))
	copy(items, req.Items)
	return Order{
		ID:             id,
		OwnerID:        ownerID,
		CustomerID:     req.CustomerID,
		Status:         StatusPending,
		Currency:       req.Currency,
		Items:          items,
		TotalMinor:     req.Total(),
		CreatedAt:      now.UTC(),
		UpdatedAt:      now.UTC(),
		Version:        1,
		IdempotencyKey: idemKey,
	}
}

// Transition moves the order to status to. It returns false (and leaves o
// unchanged) when the order is already terminal: terminal statuses are final,
// which makes repeated or reordered saga messages harmless. The one exit is
// FAILED → CANCELLED: an operator redrove a saga whose compensation had given
// up, and the compensation has now finished.
func (o *Order) Transition(to Status, reason string, now time.Time) bool {
	if o.Status == to || (o.Status.Terminal() && !(o.Status == StatusFailed && to == StatusCancelled)) {
		return false
	}
	o.Status = to
	o.StatusReason = reason
	o.UpdatedAt = now.UTC()
	o.Version++
	return true
}
