package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/storetest"
)

func openAt(t *testing.T, path string, cfg sqlitestore.Config) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, filepath.Join(t.TempDir(), "store.db"), sqlitestore.Config{})
	})
}

func TestReopenKeepsDataAndAppliesNoMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	o := order.Order{ID: "ord-1", Status: order.StatusPending, Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 2}}, Version: 1}

	s1, err := sqlitestore.Open(ctx, path, sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	applied := countMigrations(t, s1)
	if applied == 0 {
		t.Fatal("no migration recorded in schema_migrations")
	}
	if err := s1.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) }); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := openAt(t, path, sqlitestore.Config{})
	if got := countMigrations(t, s2); got != applied {
		t.Errorf("after reopen %d migrations recorded, want %d (none re-applied)", got, applied)
	}
	err = s2.View(ctx, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOrder(ctx, o.ID)
		if err == nil && (got.Status != o.Status || len(got.Items) != 1 || got.Version != 1) {
			t.Errorf("reopened order %+v, want %+v", got, o)
		}
		return err
	})
	if err != nil {
		t.Fatalf("GetOrder after reopen: %v", err)
	}
}

func countMigrations(t *testing.T, s *sqlitestore.Store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, path := range []string{"", ":memory:", "a.db?mode=ro", filepath.Join(t.TempDir(), "missing-dir", "x.db")} {
		s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Config{})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", path)
		}
	}
}

// Zero settings take their defaults (the other tests open with Config{});
// a negative one is refused with an error naming the field, and no file is
// created.
func TestOpenRefusesNegativeSettings(t *testing.T) {
	cases := []struct {
		name string
		cfg  sqlitestore.Config
		want string
	}{
		{"negative MaxOpenConns", sqlitestore.Config{MaxOpenConns: -1}, "MaxOpenConns must not be negative (got -1)"},
		{"negative BusyTimeout", sqlitestore.Config{BusyTimeout: -time.Second}, "BusyTimeout must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			s, err := sqlitestore.Open(context.Background(), path, tc.cfg)
			if err == nil {
				s.Close()
			}
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v; want Invalid containing %q", err, tc.want)
			}
			if _, serr := os.Stat(path); !os.IsNotExist(serr) {
				t.Errorf("a refused Open left %s behind (%v)", path, serr)
			}
		})
	}
}

// TestBusyIsTransient holds the write lock from one connection while a second
// store (with a short busy timeout) writes: InTx retries, then reports
// Transient; once the lock is released the same write succeeds.
func TestBusyIsTransient(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	holder := openAt(t, path, sqlitestore.Config{})
	var txCalls atomic.Int32
	writer := openAt(t, path, sqlitestore.Config{
		BusyTimeout: 5 * time.Millisecond,
		OnTx:        func(bool) { txCalls.Add(1) },
	})

	lock, err := holder.DB().BeginTx(ctx, nil) // BEGIN IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback() //nolint:errcheck
	if _, err := lock.Exec(`UPDATE orders SET version = version WHERE id = 'none'`); err != nil {
		t.Fatal(err)
	}

	insert := func(ctx context.Context, tx store.Tx) error {
		return tx.InsertOrder(ctx, order.Order{ID: "ord-busy", Version: 1})
	}
	err = writer.InTx(ctx, insert)
	if !apperr.Is(err, apperr.Transient) || !apperr.Retryable(err) {
		t.Fatalf("InTx while another connection holds the write lock: %v (kind %v), want Transient", err, apperr.KindOf(err))
	}
	if got := txCalls.Load(); got != 1 {
		t.Errorf("OnTx called %d times for one InTx, want 1 (not once per retry)", got)
	}
	// Reads are not blocked by the writer in WAL mode.
	if err := writer.View(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, "ord-busy")
		if !apperr.Is(err, apperr.NotFound) {
			t.Errorf("GetOrder during the lock: %v, want NotFound", err)
		}
		return nil
	}); err != nil {
		t.Errorf("View while the write lock is held: %v", err)
	}

	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := writer.InTx(ctx, insert); err != nil {
		t.Fatalf("InTx after the lock was released: %v", err)
	}
	if txCalls.Load() != 3 {
		t.Errorf("OnTx called %d times, want 3 (InTx, View, InTx)", txCalls.Load())
	}
}
