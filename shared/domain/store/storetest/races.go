package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
)

var raceTests = []subtest{
	{"idempotency_claim", testClaimRace},
	{"order_read_modify_write", testUpdateRace},
}

// testClaimRace: N callers claim one key at once; exactly one wins and every
// other gets Conflict (not Transient or Internal: InTx absorbs contention).
func testClaimRace(t *testing.T, s store.Store) {
	const n = 50
	scope, key := newID("scope"), newID("key")
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteIdempotencyKey(ctx, scope, key) })
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rec := idempotency.Record{Scope: scope, Key: key, Fingerprint: fmt.Sprintf("fp-%d", i),
				Status: idempotency.StatusCompleted, CreatedAt: odd, ExpiresAt: farFuture}
			errs[i] = s.InTx(testCtx(t), func(ctx context.Context, tx store.Tx) error {
				return tx.InsertIdempotencyKey(ctx, rec)
			})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("callers %d and %d both claimed the key", winner, i)
		case err == nil:
			winner = i
		case !apperr.Is(err, apperr.Conflict):
			t.Errorf("caller %d: got %v (kind %s), want Conflict", i, err, kindOf(err))
		}
	}
	if winner < 0 {
		t.Fatal("no caller claimed the key")
	}
	got, err := getIdem(t, s, scope, key)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("fp-%d", winner); got.Fingerprint != want {
		t.Errorf("stored fingerprint %q, want the winner's %q", got.Fingerprint, want)
	}
}

// testUpdateRace: N writers each read an order in one transaction and write
// it back with UpdateOrder(expectedVersion) in another, retrying on Conflict.
// No update may be lost: the version and the counter both grow by exactly N.
func testUpdateRace(t *testing.T, s store.Store) {
	const (
		n           = 12
		maxAttempts = 500
	)
	o := sampleOrder()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) })
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = bumpOrder(testCtx(t), s, o.ID, maxAttempts)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetOrder(ctx, o.ID)
		if err != nil {
			return err
		}
		if got.Version != o.Version+n || got.TotalMinor != o.TotalMinor+n {
			t.Errorf("after %d writers: version %d, total %d; want %d, %d (a lost update)",
				n, got.Version, got.TotalMinor, o.Version+n, o.TotalMinor+n)
		}
		return nil
	})
}

// bumpOrder increments an order's TotalMinor by one with optimistic
// concurrency, retrying on Conflict.
func bumpOrder(ctx context.Context, s store.Store, id string, maxAttempts int) error {
	for range maxAttempts {
		var cur order.Order
		if err := s.View(ctx, func(ctx context.Context, tx store.Tx) (err error) {
			cur, err = tx.GetOrder(ctx, id)
			return err
		}); err != nil {
			return err
		}
		next := cur
		next.TotalMinor++
		next.Version++
		err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.UpdateOrder(ctx, next, cur.Version)
		})
		switch {
		case err == nil:
			return nil
		case !apperr.Is(err, apperr.Conflict):
			return fmt.Errorf("UpdateOrder: got %w (kind %s), want nil or Conflict", err, kindOf(err))
		}
	}
	return fmt.Errorf("no successful update in %d attempts", maxAttempts)
}
