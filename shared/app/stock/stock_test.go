package stock_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newService(t *testing.T, seed map[string]int64) *stock.Service {
	t.Helper()
	s, _ := newServiceStore(t, seed)
	return s
}

// newServiceStore returns a seeded service and the store under it.
func newServiceStore(t *testing.T, seed map[string]int64) (*stock.Service, store.Store) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "stock.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := stock.New(stock.Config{Store: st, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(context.Background(), seed); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return s, st
}

func mustStock(t *testing.T, s *stock.Service, sku string) inventory.Stock {
	t.Helper()
	st, err := s.Get(context.Background(), sku)
	if err != nil {
		t.Fatalf("get %s: %v", sku, err)
	}
	return st
}

func wantStock(t *testing.T, s *stock.Service, sku string, avail, reserved int64) {
	t.Helper()
	st := mustStock(t, s, sku)
	if st.Available != avail || st.Reserved != reserved {
		t.Errorf("%s: got available=%d reserved=%d, want %d/%d", sku, st.Available, st.Reserved, avail, reserved)
	}
}

func TestReserveRelease(t *testing.T) {
	ctx := context.Background()
	lines := []inventory.Line{{SKU: "a", Quantity: 2}, {SKU: "b", Quantity: 1}, {SKU: "a", Quantity: 1}}
	tests := []struct {
		name string
		run  func(t *testing.T, s *stock.Service)
	}{
		{"reserve takes every line once, repeat is a no-op", func(t *testing.T, s *stock.Service) {
			for i := 0; i < 3; i++ {
				if err := s.Reserve(ctx, "saga-1", "o-1", lines); err != nil {
					t.Fatalf("reserve #%d: %v", i, err)
				}
			}
			wantStock(t, s, "a", 7, 3)
			wantStock(t, s, "b", 4, 1)
		}},
		{"release gives stock back once", func(t *testing.T, s *stock.Service) {
			if err := s.Reserve(ctx, "saga-1", "o-1", lines); err != nil {
				t.Fatal(err)
			}
			for i, want := range []bool{true, true, true} {
				got, err := s.Release(ctx, "saga-1")
				if err != nil || got != want {
					t.Fatalf("release #%d: got %v, %v; want %v", i, got, err, want)
				}
			}
			wantStock(t, s, "a", 10, 0)
			wantStock(t, s, "b", 5, 0)
			if err := s.Reserve(ctx, "saga-1", "o-1", lines); !apperr.Is(err, apperr.Rejected) {
				t.Fatalf("reserve after release: got %v, want Rejected", err)
			}
		}},
		{"out of stock rejects all lines and remembers", func(t *testing.T, s *stock.Service) {
			big := []inventory.Line{{SKU: "a", Quantity: 1}, {SKU: "b", Quantity: 6}}
			for i := 0; i < 2; i++ {
				err := s.Reserve(ctx, "saga-2", "o-2", big)
				if !apperr.Is(err, apperr.Rejected) || apperr.Message(err) != "out of stock: b" {
					t.Fatalf("reserve #%d: got %v, want Rejected out of stock: b", i, err)
				}
			}
			wantStock(t, s, "a", 10, 0)
			wantStock(t, s, "b", 5, 0)
			if got, err := s.Release(ctx, "saga-2"); err != nil || got {
				t.Fatalf("release of rejected: got %v, %v; want false, nil", got, err)
			}
			wantStock(t, s, "a", 10, 0)
		}},
		{"unknown sku has no stock", func(t *testing.T, s *stock.Service) {
			err := s.Reserve(ctx, "saga-3", "o-3", []inventory.Line{{SKU: "nope", Quantity: 1}})
			if !apperr.Is(err, apperr.Rejected) {
				t.Fatalf("got %v, want Rejected", err)
			}
		}},
		{"release before reserve blocks the late reserve", func(t *testing.T, s *stock.Service) {
			if got, err := s.Release(ctx, "saga-4"); err != nil || got {
				t.Fatalf("release: got %v, %v; want false, nil", got, err)
			}
			if err := s.Reserve(ctx, "saga-4", "o-4", lines); !apperr.Is(err, apperr.Rejected) {
				t.Fatalf("late reserve: got %v, want Rejected", err)
			}
			wantStock(t, s, "a", 10, 0)
		}},
		{"exact stock can be taken", func(t *testing.T, s *stock.Service) {
			if err := s.Reserve(ctx, "saga-5", "o-5", []inventory.Line{{SKU: "b", Quantity: 5}}); err != nil {
				t.Fatal(err)
			}
			wantStock(t, s, "b", 0, 5)
		}},
		{"invalid input", func(t *testing.T, s *stock.Service) {
			for _, c := range []struct {
				id    string
				lines []inventory.Line
			}{{"", lines}, {"x", nil}, {"x", []inventory.Line{{SKU: "a", Quantity: 0}}}, {"x", []inventory.Line{{SKU: "", Quantity: 1}}}} {
				if err := s.Reserve(ctx, c.id, "o", c.lines); !apperr.Is(err, apperr.Invalid) {
					t.Errorf("reserve(%q, %v): got %v, want Invalid", c.id, c.lines, err)
				}
			}
			if _, err := s.Release(ctx, ""); !apperr.Is(err, apperr.Invalid) {
				t.Errorf("release(\"\"): got %v, want Invalid", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newService(t, map[string]int64{"a": 10, "b": 5}))
		})
	}
}

func TestSeedIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := newService(t, map[string]int64{"a": 3})
	if err := s.Reserve(ctx, "saga-1", "o", []inventory.Line{{SKU: "a", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(ctx, map[string]int64{"a": 100, "c": 7}); err != nil {
		t.Fatal(err)
	}
	wantStock(t, s, "a", 2, 1)
	wantStock(t, s, "c", 7, 0)
	if err := s.Seed(ctx, map[string]int64{"d": -1}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("negative seed: got %v, want Invalid", err)
	}
}

// TestConcurrentReservationsNeverOversell races many sagas for little stock
// and the same saga against itself.
func TestConcurrentReservationsNeverOversell(t *testing.T) {
	ctx := context.Background()
	s, st := newServiceStore(t, map[string]int64{"a": 7})
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("saga-%d", i%10) // every saga twice
			errs[i] = s.Reserve(ctx, id, "o", []inventory.Line{{SKU: "a", Quantity: 2}})
		}(i)
	}
	wg.Wait()
	ok := map[string]bool{}
	for i, err := range errs {
		id := fmt.Sprintf("saga-%d", i%10)
		switch {
		case err == nil:
			ok[id] = true
		case !apperr.Is(err, apperr.Rejected):
			t.Fatalf("reserve %d: unexpected %v", i, err)
		}
	}
	for i := 0; i < 10; i++ { // both calls of one saga agree
		id := fmt.Sprintf("saga-%d", i)
		if (errs[i] == nil) != (errs[i+10] == nil) {
			t.Errorf("%s: the two calls disagree: %v vs %v", id, errs[i], errs[i+10])
		}
	}
	if len(ok) != 3 {
		t.Errorf("got %d successful sagas, want 3 (7 units / 2)", len(ok))
	}
	wantStock(t, s, "a", 1, 6)
	var all []inventory.Stock
	err := st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		all, err = tx.ListStock(ctx)
		return err
	})
	if err != nil || len(all) != 1 || all[0].Available < 0 {
		t.Fatalf("list stock: %v %+v", err, all)
	}
}

func TestSetAvailableIsAuditedAndValidated(t *testing.T) {
	svc, db := newServiceStore(t, nil)
	ctx := context.Background()
	if _, err := svc.SetAvailable(ctx, "ops", "sku-new", 40); err != nil {
		t.Fatal(err)
	}
	if err := svc.Reserve(ctx, "saga-1", "order-1", []inventory.Line{{SKU: "sku-new", Quantity: 15}}); err != nil {
		t.Fatal(err)
	}
	st, err := svc.SetAvailable(ctx, "ops", "sku-new", 100)
	if err != nil || st.Available != 100 || st.Reserved != 15 {
		t.Fatalf("stock %+v %v: set must keep reserved units", st, err)
	}
	for _, bad := range []struct {
		sku string
		n   int64
	}{{"", 1}, {"bad sku", 1}, {"sku-1", -1}, {"sku-1", stock.MaxAvailable + 1}} {
		if _, err := svc.SetAvailable(ctx, "ops", bad.sku, bad.n); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("SetAvailable(%q, %d) = %v, want Invalid", bad.sku, bad.n, err)
		}
	}
	_ = db.View(ctx, func(ctx context.Context, tx store.Tx) error {
		audit, err := tx.ListAudit(ctx, 10)
		if err != nil || len(audit) != 2 || audit[0].Actor != "ops" || audit[0].Action != "stock_set" {
			t.Errorf("audit %+v %v", audit, err)
		}
		return nil
	})
	list, err := svc.List(ctx)
	if err != nil || len(list) != 1 || list[0].SKU != "sku-new" {
		t.Errorf("list %+v %v", list, err)
	}
}
