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
	// Shards is the number of sub-rows (Shard) new reservations of the SKU
	// spread over; 0 or 1: none, the units are on this row. With Shards
	// >= 2 this row keeps no available units (they are on sub-rows
	// 0..Shards-1); it may still hold reserved and sold units of
	// reservations made before the SKU was sharded.
	Shards    int64
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
	ID      string // = saga id
	OrderID string
	Lines   []Line
	// Takes names the sub-rows the units of sharded SKUs came from (none
	// for a SKU that was not sharded when it was reserved: those units are
	// on its Stock row).
	Takes     []Take
	Status    ReservationStatus
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

// Shard is one sub-row of a sharded SKU: a share of its units that
// reservations take from and give back to without touching the SKU's other
// sub-rows, so concurrent orders of one hot SKU do not all write one row.
// The SKU's stock is the sum of its Stock row and all its sub-rows; the
// same rules hold for each (none below zero).
type Shard struct {
	SKU       string
	Shard     int64 // 0, 1, 2, ...
	Available int64
	Reserved  int64
	Sold      int64
	UpdatedAt time.Time
	Version   int64
}

// Take records that a reservation took Quantity units of SKU from sub-row
// Shard, so its release or settlement goes back to that sub-row.
type Take struct {
	SKU      string `json:"sku"`
	Shard    int64  `json:"shard"`
	Quantity int64  `json:"quantity"`
}

// MaxShards bounds the sub-rows of one SKU.
const MaxShards = 256
