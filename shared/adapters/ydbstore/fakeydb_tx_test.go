package ydbstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
)

func openFake(t *testing.T, cfg Config) (*Store, *FakeYDB) {
	t.Helper()
	f := StartFakeYDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.ConnectionString, cfg.Auth = f.DSN, AuthAnonymous
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// warm the session pool, so counts below are per operation
	_ = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { _, err := tx.GetOrder(ctx, "warm"); return err })
	f.Take()
	return s, f
}

func methods(rpcs []FakeRPC) string {
	var m []string
	for _, r := range rpcs {
		m = append(m, r.Method)
	}
	return strings.Join(m, ",")
}

// TestViewRoundTrips: a View of one read is one snapshot read-only request
// (begin and commit in its TxControl), found or not; a View of two reads
// is its reads and the commit, after the first time in a process.
func TestViewRoundTrips(t *testing.T) {
	s, f := openFake(t, Config{})
	ctx := context.Background()
	err := s.View(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, "o-1")
		return err
	})
	rpcs := f.Take()
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("one read: %v, want NotFound", err)
	}
	if len(rpcs) != 1 || !rpcs[0].Snapshot || !rpcs[0].Commit {
		t.Errorf("a View of one read sent %s, want one snapshot read-only request", methods(rpcs))
	}
	two := func(ctx context.Context, tx store.Tx) error {
		_, err1 := tx.GetOrder(ctx, "o-1")
		_, err2 := tx.GetSaga(ctx, "s-1")
		if apperr.Is(err1, apperr.NotFound) && apperr.Is(err2, apperr.NotFound) {
			return nil
		}
		return err1
	}
	for i, want := range []string{
		"ExecuteQuery,ExecuteQuery,ExecuteQuery,CommitTransaction", // first time: the probe's read, then the View
		"ExecuteQuery,ExecuteQuery,CommitTransaction",
	} {
		if err := s.View(ctx, two); err != nil {
			t.Fatal(err)
		}
		if got := methods(f.Take()); got != want {
			t.Errorf("View of two reads, run %d: sent %s, want %s", i+1, got, want)
		}
	}
}

// TestOneAttemptBudgetForBothRuns: the rerun after a failed deferred
// precondition shares the transaction's budget of MaxAttempts runs.
func TestOneAttemptBudgetForBothRuns(t *testing.T) {
	s, f := openFake(t, Config{MaxAttempts: 3})
	f.Refuse = func(r FakeRPC) (Ydb.StatusIds_StatusCode, string, bool) {
		if r.Commit && strings.Contains(r.Text, "INSERT INTO orders") && strings.Contains(r.Text, "$w0_") {
			return Ydb.StatusIds_GENERIC_ERROR, "Condition violated: " + guardMarker, true
		}
		if r.Method == "ExecuteQuery" && !r.Commit {
			return Ydb.StatusIds_ABORTED, "Transaction locks invalidated", true
		}
		return 0, "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOrder(ctx, order.Order{ID: "o-1", OwnerID: "u", CustomerID: "c", SagaID: "s", Status: order.StatusPending,
			Currency: "RUB", Version: 1}); err != nil {
			return err
		}
		return tx.InsertOrder(ctx, order.Order{ID: "o-2", OwnerID: "u", CustomerID: "c", SagaID: "s2", Status: order.StatusPending,
			Currency: "RUB", Version: 1})
	})
	if err == nil {
		t.Fatal("want an error")
	}
	// Each DoTx run sends one query: the optimistic run its flush, each
	// immediate run its first key read (the probes send nothing).
	queries := 0
	for _, r := range f.Take() {
		if r.Method == "ExecuteQuery" {
			queries++
		}
	}
	if queries != 3 {
		t.Errorf("%d runs reached the server, want MaxAttempts = 3", queries)
	}
}
