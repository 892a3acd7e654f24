// Package inventory is the stock participant's model: stock per SKU and
// reservations keyed by saga, with rules that keep stock from going negative.
package inventory

import "time"

// Stock is the quantity of one SKU. Available, Reserved and Sold never go
// below zero, and only an operator changes their sum: a reservation moves
// units from Available to Reserved, a release back, and confirming the
// order (settling the reservation) from Reserved to Sold.
type Stock struct {
	SKU       string
	Available int64
	Reserved  int64 // held by orders in flight
	Sold      int64 // taken by confirmed orders
	UpdatedAt time.Time
	Version   int64
}

// ReservationStatus of a reservation.
type ReservationStatus string

// Reservation statuses.
const (
	Reserved ReservationStatus = "reserved"
	Released ReservationStatus = "released"
	// Rejected records that a reservation was refused (out of stock), so a
	// repeated attempt gives the same answer and a release is a no-op.
	Rejected ReservationStatus = "rejected"
	// Settled: the order was confirmed and its units moved from Reserved to
	// Sold; nothing can release them any more.
	Settled ReservationStatus = "settled"
)

// Line is one reserved SKU quantity.
type Line struct {
	SKU      string `json:"sku"`
	Quantity int64  `json:"quantity"`
}

// Reservation is keyed by the saga id: one per saga, so a duplicate
// reserve or release is recognised and changes nothing.
type Reservation struct {
	ID        string // = saga id
	OrderID   string
	Lines     []Line
	Status    ReservationStatus
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}
