package order

import (
	"encoding/json"
	"time"

	"ordersaga/shared/domain/apperr"
)

// View is the JSON representation of an order: the payload of every order
// event, and the order part of the API's order view (orders.View).
type View struct {
	ID           string    `json:"id"`
	CustomerID   string    `json:"customer_id"`
	Status       Status    `json:"status"`
	StatusReason string    `json:"status_reason,omitempty"`
	Currency     string    `json:"currency"`
	Items        []Item    `json:"items"`
	TotalMinor   int64     `json:"total_minor"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	Version      int64     `json:"version"`
}

// NewView renders o.
func NewView(o Order) View {
	return View{
		ID: o.ID, CustomerID: o.CustomerID, Status: o.Status, StatusReason: o.StatusReason,
		Currency: o.Currency, Items: o.Items, TotalMinor: o.TotalMinor,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, Version: o.Version,
	}
}

// EventPayload is the JSON payload of an order event announcing o's status.
func EventPayload(o Order) ([]byte, error) {
	b, err := json.Marshal(NewView(o))
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "encode order %s", o.ID)
	}
	return b, nil
}
