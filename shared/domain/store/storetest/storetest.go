// Package storetest is the conformance suite of the store port (package
// store). Every adapter runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openTestStore(t) })
//	}
//
// The suite uses only the port. It does not assume empty tables: open may
// hand every subtest the same database (a shared YDB database), so each
// subtest uses fresh uuid-based ids, isolates list queries by a unique shard,
// scope, consumer or a random time window in the past (1975-1995, inside
// YDB's Timestamp range), compares only the rows it created, compares totals
// and backlogs as deltas, and in t.Cleanup retires rows that could otherwise
// show up in another run's list queries.
package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// Features are the documented differences an adapter may declare. Each one
// changes what a subtest asserts, never whether it runs.
type Features struct {
	// ExpiryByTTL: the database deletes expired rows itself (YDB's TTL on
	// inbox.expires_at, idempotency_keys.expires_at and outbox.expire_at),
	// so the port's explicit purges of expired rows find nothing:
	// DeleteExpiredInbox and DeletePublishedOutbox delete nothing and
	// return 0, and ListStaleIdempotencyKeys returns only keys in progress
	// with a lapsed lock (an expired key waits for the TTL; Decide already
	// treats it as free). The subtests assert exactly that.
	ExpiryByTTL bool
}

// features is what the running suite's adapter declared (RunWith).
var features Features

// Run runs the whole suite for an adapter with no Features. open is called
// once per subtest and returns a ready store; it owns the store's lifetime
// (close it with t.Cleanup). The subtests do not call t.Parallel.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	RunWith(t, Features{}, open)
}

// RunWith runs the whole suite for an adapter that declares f.
func RunWith(t *testing.T, f Features, open func(t *testing.T) store.Store) {
	prev := features
	features = f
	defer func() { features = prev }()
	groups := []struct {
		name  string
		tests []subtest
	}{
		{"tx", txTests},
		{"orders", orderTests},
		{"orders_by_customer", orderCustomerTests},
		{"idempotency", idempotencyTests},
		{"sagas", sagaTests},
		{"outbox", outboxTests},
		{"inbox", inboxTests},
		{"inventory", inventoryTests},
		{"payments", paymentTests},
		{"deadletters", deadLetterTests},
		{"audit", auditTests},
		{"races", raceTests},
		{"text", textTests},
		{"conservation", conservationTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) { st.fn(t, open(t)) })
			}
		})
	}
}

// subtest is one named check against a store.
type subtest struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// testCtx returns a context that ends with the test (or after a minute).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newID returns a unique id with a readable prefix.
func newID(prefix string) string { return prefix + "-" + uuid.NewString() }

// window returns the start of a random one-day window between 1975 and 1995,
// whole seconds, in which a subtest places the times its list queries look
// at, so that rows of other subtests (which use current or far-future times)
// never match.
func window() time.Time {
	start := time.Date(1975, 1, 1, 0, 0, 0, 0, time.UTC)
	return start.Add(rand.N(20 * 365 * 24 * time.Hour)).Truncate(time.Second)
}

// sec returns base plus n seconds.
func sec(base time.Time, n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// farFuture is a time no list query of the suite reaches (inside YDB's range).
var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// mustTx runs fn in s.InTx and fails the test on error.
func mustTx(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(testCtx(t), fn); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

// mustView runs fn in s.View and fails the test on error.
func mustView(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := s.View(testCtx(t), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// tryTx runs fn in s.InTx and returns its error.
func tryTx(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) error {
	return s.InTx(testCtx(t), fn)
}

// wantKind fails the test unless err is of kind k.
func wantKind(t *testing.T, what string, err error, k apperr.Kind) {
	t.Helper()
	if !apperr.Is(err, k) {
		t.Errorf("%s: got error %v (kind %v), want kind %v", what, err, kindOf(err), k)
	}
}

func kindOf(err error) string {
	if err == nil {
		return "none"
	}
	return apperr.KindOf(err).String()
}

// cleanup registers fn to run (in its own transaction) when the test ends,
// before the store is closed; failures are reported but do not panic.
func cleanup(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.InTx(ctx, fn); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// idsOf maps a slice to the ids of its elements.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

// onlyMine keeps the ids that are in mine, preserving order.
func onlyMine(ids []string, mine map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if mine[id] {
			out = append(out, id)
		}
	}
	return out
}

// setOf returns the ids as a set.
func setOf(ids ...string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// equalIDs reports whether two id lists are equal (nil equals empty).
func equalIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
