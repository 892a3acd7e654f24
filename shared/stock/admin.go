package stock

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"ordersaga/shared/apperr"
	"ordersaga/shared/dlq"
	"ordersaga/shared/inventory"
	"ordersaga/shared/store"
)

// MaxAvailable bounds a stock level set by an operator.
const MaxAvailable = 1_000_000_000_000

var skuPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// SetAvailable sets the available quantity of one SKU (creating it if
// needed) for an operator, and records who did it in the audit log in the
// same transaction. Reserved and sold units are not touched: they belong to
// running and confirmed orders. Errors: Invalid (bad SKU or quantity), Transient.
func (s *Service) SetAvailable(ctx context.Context, actor, sku string, available int64) (inventory.Stock, error) {
	switch {
	case !skuPattern.MatchString(sku):
		return inventory.Stock{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/sku", Detail: "must be 1-64 characters of letters, digits, '.', '_' or '-'"}}, "invalid SKU %q", sku)
	case available < 0 || available > MaxAvailable:
		return inventory.Stock{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/available", Detail: fmt.Sprintf("must be between 0 and %d", int64(MaxAvailable))}}, "invalid quantity")
	case actor == "":
		return inventory.Stock{}, apperr.New(apperr.Invalid, "stock: an actor is required")
	}
	var out inventory.Stock
	err := s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.cfg.Now()
		cur, err := tx.GetStock(ctx, sku)
		prev := cur.Version
		switch {
		case apperr.Is(err, apperr.NotFound):
			cur, prev = inventory.Stock{SKU: sku}, 0
		case err != nil:
			return err
		}
		before := cur.Available
		cur.Available, cur.UpdatedAt, cur.Version = available, now, prev+1
		if err := tx.PutStock(ctx, cur, prev); err != nil {
			return err
		}
		params, _ := json.Marshal(map[string]any{"sku": sku, "available": available, "before": before})
		if err := tx.InsertAudit(ctx, dlq.AuditRecord{ID: s.cfg.NewID(), At: now, Actor: actor, Action: "stock_set",
			Params: params, Count: 1, Outcome: "ok", Detail: params}); err != nil {
			return err
		}
		out = cur
		return nil
	})
	return out, err
}

// List returns every SKU's stock, ordered by SKU.
func (s *Service) List(ctx context.Context) ([]inventory.Stock, error) {
	var out []inventory.Stock
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		out, err = tx.ListStock(ctx)
		return err
	})
	return out, err
}
