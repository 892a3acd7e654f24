package stock

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

// MaxAvailable bounds a stock level set by an operator.
const MaxAvailable = 1_000_000_000_000

var skuPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// SetAvailable sets the available quantity of one SKU (creating it if
// needed) for an operator, and records who did it in the audit log in the
// same transaction. A sharded SKU's units are spread evenly over its
// sub-rows. Reserved and sold units are not touched: they belong to
// running and confirmed orders. It returns the SKU's stock (sub-rows
// summed). Errors: Invalid (bad SKU or quantity), Transient.
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
		cur, prev, err := readRow(ctx, tx, sku)
		if err != nil {
			return err
		}
		view, err := withShards(ctx, tx, cur)
		if err != nil {
			return err
		}
		before := view.Available
		if _, _, err := spread(ctx, tx, cur, prev, cur.Shards, available, now); err != nil {
			return err
		}
		if out, err = ViewIn(ctx, tx, sku); err != nil {
			return err
		}
		return audit(ctx, tx, s.cfg.NewID(), actor, "stock_set", now,
			map[string]any{"sku": sku, "available": available, "before": before})
	})
	return out, err
}

// SetShards sets how many sub-rows new reservations of one SKU spread over
// (creating the SKU with no stock if needed), for an operator: 1 stops
// spreading (every available unit goes back to the stock row); 2 to
// inventory.MaxShards spread the available units evenly over sub-rows
// 0..shards-1 (see Rebalance). Reserved and sold units stay on the rows
// their reservations name, and available + reserved + sold is unchanged.
// The change is audited in the same transaction. It returns the SKU's
// stock (sub-rows summed). Errors: Invalid (bad SKU, count or actor),
// Transient. Idempotent.
func (s *Service) SetShards(ctx context.Context, actor, sku string, shards int64) (inventory.Stock, error) {
	switch {
	case !skuPattern.MatchString(sku):
		return inventory.Stock{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/sku", Detail: "must be 1-64 characters of letters, digits, '.', '_' or '-'"}}, "invalid SKU %q", sku)
	case shards < 1 || shards > inventory.MaxShards:
		return inventory.Stock{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/shards", Detail: fmt.Sprintf("must be between 1 and %d", inventory.MaxShards)}}, "invalid number of sub-rows")
	case actor == "":
		return inventory.Stock{}, apperr.New(apperr.Invalid, "stock: an actor is required")
	}
	var out inventory.Stock
	err := s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.cfg.Now()
		cur, prev, err := readRow(ctx, tx, sku)
		if err != nil {
			return err
		}
		view, err := withShards(ctx, tx, cur)
		if err != nil {
			return err
		}
		_, moved, err := spread(ctx, tx, cur, prev, shards, view.Available, now)
		if err != nil {
			return err
		}
		if out, err = ViewIn(ctx, tx, sku); err != nil {
			return err
		}
		if err := conserved(view, out); err != nil {
			return err
		}
		return audit(ctx, tx, s.cfg.NewID(), actor, "stock_shards", now,
			map[string]any{"sku": sku, "shards": shards, "before": view.Shards, "moved": moved})
	})
	return out, err
}

// Rebalance spreads one SKU's available units evenly again over its
// sub-rows (or, for a SKU that is not sharded, brings any left on
// sub-rows back to its stock row), in one transaction, for an operator;
// no unit is created or lost (the total is checked before commit) and
// reserved and sold units do not move. It returns the SKU's stock and how
// many units changed rows, and audits the action. Errors: Invalid (bad
// actor), NotFound (no such SKU), Transient. Safe to run while orders
// reserve: each write is versioned, so a concurrent reservation or this
// is retried.
func (s *Service) Rebalance(ctx context.Context, actor, sku string) (inventory.Stock, int64, error) {
	if actor == "" {
		return inventory.Stock{}, 0, apperr.New(apperr.Invalid, "stock: an actor is required")
	}
	var (
		out   inventory.Stock
		moved int64
	)
	err := s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.cfg.Now()
		cur, err := tx.GetStock(ctx, sku)
		if err != nil {
			return err
		}
		view, err := withShards(ctx, tx, cur)
		if err != nil {
			return err
		}
		if _, moved, err = spread(ctx, tx, cur, cur.Version, cur.Shards, view.Available, now); err != nil {
			return err
		}
		if out, err = ViewIn(ctx, tx, sku); err != nil {
			return err
		}
		if err := conserved(view, out); err != nil {
			return err
		}
		return audit(ctx, tx, s.cfg.NewID(), actor, "stock_rebalance", now,
			map[string]any{"sku": sku, "shards": cur.Shards, "moved": moved})
	})
	return out, moved, err
}

// readRow reads a SKU's stock row for an operator change: a missing SKU
// is an empty row at version 0 (the change inserts it).
func readRow(ctx context.Context, tx store.Tx, sku string) (inventory.Stock, int64, error) {
	cur, err := tx.GetStock(ctx, sku)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return inventory.Stock{SKU: sku}, 0, nil
	case err != nil:
		return cur, 0, err
	}
	return cur, cur.Version, nil
}

// conserved fails (Internal, rolling the transaction back) unless an
// operator's move kept every count of the SKU.
func conserved(before, after inventory.Stock) error {
	if before.Available != after.Available || before.Reserved != after.Reserved || before.Sold != after.Sold {
		return apperr.New(apperr.Internal, "stock: moving units of %s changed its counts: %d/%d/%d before, %d/%d/%d after",
			before.SKU, before.Available, before.Reserved, before.Sold, after.Available, after.Reserved, after.Sold)
	}
	return nil
}

// audit records an operator's stock change.
func audit(ctx context.Context, tx store.Tx, id, actor, action string, now time.Time, detail map[string]any) error {
	params, _ := json.Marshal(detail)
	return tx.InsertAudit(ctx, dlq.AuditRecord{ID: id, At: now, Actor: actor, Action: action,
		Params: params, Count: 1, Outcome: "ok", Detail: params})
}

// List returns every SKU's stock (sub-rows summed), ordered by SKU.
func (s *Service) List(ctx context.Context) ([]inventory.Stock, error) {
	var out []inventory.Stock
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		out, err = ListIn(ctx, tx)
		return err
	})
	return out, err
}
