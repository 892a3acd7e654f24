package dlq

import (
	"context"
	"encoding/json"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/payment"
)

// Held is what a saga keeps from everyone else while it is not finished
// cleanly: the units its reservation still holds (reserved, neither sold nor
// released) and a charge that succeeded with no refund after it. A failed
// saga keeps them until an operator redrives its dead letter (its
// compensations release and refund them) or settles them by hand.
type Held struct {
	// Units are the reserved units, one line per SKU of the reservation.
	Units []HeldUnit `json:"units,omitempty"`
	// Charge is the charge not refunded, if any.
	Charge *HeldCharge `json:"charge,omitempty"`
}

// HeldUnit is one reserved SKU quantity.
type HeldUnit struct {
	SKU      string `json:"sku"`
	Quantity int64  `json:"quantity"`
}

// HeldCharge is a charge with no refund.
type HeldCharge struct {
	PaymentID   string `json:"payment_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// Empty reports whether nothing is held.
func (h Held) Empty() bool { return len(h.Units) == 0 && h.Charge == nil }

// AttrHeld is the attribute of a saga dead letter that records, as the JSON
// of Held, what the saga held when it was dead-lettered (absent: nothing).
const AttrHeld = "held"

// HeldReader is the part of a store transaction HeldBy reads.
type HeldReader interface {
	// GetReservation returns the reservation of a saga (its id is the saga id); NotFound when none.
	GetReservation(ctx context.Context, id string) (inventory.Reservation, error)
	// GetPayment returns a ledger entry (payment.EntryID); NotFound when none.
	GetPayment(ctx context.Context, id string) (payment.Entry, error)
}

// HeldBy reads what saga sagaID holds now (three point reads). Errors are
// the reader's, other than NotFound.
func HeldBy(ctx context.Context, r HeldReader, sagaID string) (Held, error) {
	var h Held
	res, err := r.GetReservation(ctx, sagaID)
	switch {
	case apperr.Is(err, apperr.NotFound):
	case err != nil:
		return Held{}, err
	case res.Status == inventory.Reserved:
		for _, l := range res.Lines {
			h.Units = append(h.Units, HeldUnit{SKU: l.SKU, Quantity: l.Quantity})
		}
	}
	charge, err := r.GetPayment(ctx, payment.EntryID(sagaID, payment.Charge))
	switch {
	case apperr.Is(err, apperr.NotFound):
		return h, nil
	case err != nil:
		return Held{}, err
	case charge.Status != payment.Succeeded:
		return h, nil
	}
	refund, err := r.GetPayment(ctx, payment.EntryID(sagaID, payment.Refund))
	switch {
	case apperr.Is(err, apperr.NotFound):
	case err != nil:
		return Held{}, err
	case refund.Status == payment.Succeeded:
		return h, nil
	}
	h.Charge = &HeldCharge{PaymentID: charge.ID, AmountMinor: charge.AmountMinor, Currency: charge.Currency}
	return h, nil
}

// Attr returns h as the value of AttrHeld.
func (h Held) Attr() string {
	b, _ := json.Marshal(h) // plain fields: cannot fail
	return string(b)
}

// HeldOf returns what d recorded as held when it was dead-lettered; ok is
// false when it recorded nothing (or an unreadable value).
func HeldOf(d DeadLetter) (h Held, ok bool) {
	v, found := d.Attrs[AttrHeld]
	if !found || json.Unmarshal([]byte(v), &h) != nil {
		return Held{}, false
	}
	return h, !h.Empty()
}
