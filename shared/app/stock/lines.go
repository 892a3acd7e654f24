package stock

import (
	"context"
	"sort"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// aggregate validates lines and sums the quantity per SKU (an order may name
// one SKU on several lines).
func aggregate(sagaID string, lines []inventory.Line) (map[string]int64, error) {
	if sagaID == "" {
		return nil, apperr.New(apperr.Invalid, "stock: saga id is required")
	}
	if len(lines) == 0 {
		return nil, apperr.New(apperr.Invalid, "stock: nothing to reserve")
	}
	need := make(map[string]int64, len(lines))
	for _, l := range lines {
		if l.SKU == "" || l.Quantity < 1 {
			return nil, apperr.New(apperr.Invalid, "stock: bad line %q x %d", l.SKU, l.Quantity)
		}
		need[l.SKU] += l.Quantity
	}
	return need, nil
}

// normalized returns need as lines sorted by SKU.
func normalized(need map[string]int64) []inventory.Line {
	out := make([]inventory.Line, 0, len(need))
	for sku, q := range need {
		out = append(out, inventory.Line{SKU: sku, Quantity: q})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SKU < out[j].SKU })
	return out
}

// planAll plans a reservation of need, SKU by SKU in SKU order (see
// planLine), and names the first SKU whose available stock falls short (""
// when all suffice; nothing is planned then). A SKU without a stock row
// has none.
func planAll(ctx context.Context, tx store.Tx, sagaID string, need map[string]int64) ([]planned, string, error) {
	var plan []planned
	for _, l := range normalized(need) {
		st, err := tx.GetStock(ctx, l.SKU)
		if apperr.Is(err, apperr.NotFound) {
			return nil, l.SKU, nil
		}
		if err != nil {
			return nil, "", err
		}
		p, ok, err := planLine(ctx, tx, sagaID, st, l.Quantity)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, l.SKU, nil
		}
		plan = append(plan, p...)
	}
	return plan, "", nil
}

// reservationOutcome is what a repeated Reserve returns for an existing reservation.
func reservationOutcome(r inventory.Reservation) error {
	switch r.Status {
	case inventory.Reserved, inventory.Settled:
		// Settled: the reservation was made and then sold on confirm; a
		// repeated Reserve answers what was recorded, a success.
		return nil
	case inventory.Rejected:
		return apperr.New(apperr.Rejected, "%s", r.Reason)
	default:
		return apperr.New(apperr.Rejected, "reservation already released")
	}
}
