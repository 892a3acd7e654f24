package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
)

// A customer's orders are read backwards along idx_orders_customer_created,
// first page and later ones, with no sort and no scan; an order's bucket
// (the YDB twin's column) is written on insert and kept by an update.
func TestOrdersByCustomerReadTheIndexInOrder(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "plan.db"), Config{})
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{
		"first page": {sqlListOrdersByCustomer, []any{"c", 10}},
		"after":      {sqlListOrdersByCustomerAfter, []any{"c", 5, "o", 10}},
	} {
		text := queryPlan(t, s.DB(), q.sql, q.args...)
		if strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "SCAN orders ") ||
			!strings.Contains(text+" ", "INDEX idx_orders_customer_created ") {
			t.Errorf("%s: plan %q, want a search of idx_orders_customer_created without a sort", name, text)
		}
	}
	o := order.Order{ID: "ord-bucket", CustomerID: "c", Status: order.StatusPending, Version: 1}
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOrder(ctx, o); err != nil {
			return err
		}
		up := o
		up.Status, up.Version = order.StatusConfirmed, 2
		return tx.UpdateOrder(ctx, up, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	var b int64
	if err := s.DB().QueryRow(`SELECT bucket FROM orders WHERE id = ?`, o.ID).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if b != bucket.Of(o.ID) {
		t.Errorf("bucket = %d, want %d", b, bucket.Of(o.ID))
	}
}
