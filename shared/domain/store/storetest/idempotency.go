package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/store"
)

var idempotencyTests = []subtest{
	{"round_trip", testIdemRoundTrip},
	{"not_found", testIdemNotFound},
	{"duplicate_insert", testIdemDuplicate},
	{"replace_conditional", testIdemReplace},
	{"delete", testIdemDelete},
	{"list_stale", testIdemListStale},
}

// sampleIdem is a completed key that never shows up as stale.
func sampleIdem(scope string) idempotency.Record {
	return idempotency.Record{
		Scope: scope, Key: newID("key"), Fingerprint: "fp-1", Status: idempotency.StatusCompleted,
		ResponseStatus: 201, ResponseBody: []byte(`{"id":"1"}`), CreatedAt: odd, ExpiresAt: farFuture,
	}
}

func getIdem(t *testing.T, s store.Store, scope, key string) (idempotency.Record, error) {
	var rec idempotency.Record
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		rec, err = tx.GetIdempotencyKey(ctx, scope, key)
		return err
	})
	return rec, err
}

func testIdemRoundTrip(t *testing.T, s store.Store) {
	scope := newID("scope")
	cases := []struct {
		name string
		r    idempotency.Record
	}{
		{"every_field", idempotency.Record{
			Scope: scope, Key: "ключ " + newID("🔑"), Fingerprint: "9f86d081884c7d659a2feaa0c55ad015",
			Status: idempotency.StatusCompleted, ResponseStatus: 201,
			ResponseBody: []byte("{\"id\":\"заказ\"}\x00\xff\xfe binary"), Location: "/orders/ord-1",
			ResourceID: "ord-1", LockedUntil: odd.Add(30 * time.Second), CreatedAt: odd,
			ExpiresAt: farFuture.Add(123456789),
		}},
		{"zero_values", idempotency.Record{Scope: scope, Key: newID("key")}},
		{"empty_body_epoch", idempotency.Record{Scope: scope, Key: newID("key"), ResponseBody: []byte{},
			Status: idempotency.StatusCompleted, CreatedAt: epoch, ExpiresAt: farFuture}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cleanup(t, s, func(ctx context.Context, tx store.Tx) error {
				return tx.DeleteIdempotencyKey(ctx, tc.r.Scope, tc.r.Key)
			})
			mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, tc.r) })
			got, err := getIdem(t, s, tc.r.Scope, tc.r.Key)
			if err != nil {
				t.Fatalf("GetIdempotencyKey: %v", err)
			}
			wantEqual(t, "GetIdempotencyKey", canonIdem(got, keep), canonIdem(tc.r, stored))
		})
	}
	// The same key in another scope is another key.
	other := newID("scope")
	_, err := getIdem(t, s, other, cases[0].r.Key)
	wantKind(t, "GetIdempotencyKey of the key in another scope", err, apperr.NotFound)
}

func testIdemNotFound(t *testing.T, s store.Store) {
	_, err := getIdem(t, s, newID("scope"), newID("key"))
	wantKind(t, "GetIdempotencyKey of a missing key", err, apperr.NotFound)
}

func testIdemDuplicate(t *testing.T, s store.Store) {
	r := sampleIdem(newID("scope"))
	r.ExpiresAt = odd.AddDate(-10, 0, 0) // expired long ago: Insert still refuses it
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key) })
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, r) })
	dup := r
	dup.Fingerprint = "other"
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, dup) })
	wantKind(t, "second InsertIdempotencyKey of an (expired) key", err, apperr.Conflict)
	got, err := getIdem(t, s, r.Scope, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "key after a refused duplicate", canonIdem(got, keep), canonIdem(r, stored))
}

func testIdemReplace(t *testing.T, s store.Store) {
	r := sampleIdem(newID("scope"))
	r.Status, r.LockedUntil, r.ExpiresAt = idempotency.StatusInProgress, odd, odd.Add(time.Hour)
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key) })
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, r) })
	prev, err := getIdem(t, s, r.Scope, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	next := r
	next.Fingerprint, next.Status, next.ResponseBody = "fp-2", idempotency.StatusCompleted, []byte("new")
	next.LockedUntil, next.ExpiresAt = time.Time{}, farFuture

	stale := map[string]func(p idempotency.Record) idempotency.Record{
		"fingerprint": func(p idempotency.Record) idempotency.Record { p.Fingerprint = "fp-x"; return p },
		"status":      func(p idempotency.Record) idempotency.Record { p.Status = idempotency.StatusCompleted; return p },
		"expiry":      func(p idempotency.Record) idempotency.Record { p.ExpiresAt = p.ExpiresAt.Add(time.Second); return p },
	}
	for name, mutate := range stale {
		err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error {
			return tx.ReplaceIdempotencyKey(ctx, next, mutate(prev))
		})
		wantKind(t, "ReplaceIdempotencyKey with a different previous "+name, err, apperr.Conflict)
	}
	got, err := getIdem(t, s, r.Scope, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "key after refused takeovers", canonIdem(got, keep), canonIdem(r, stored))

	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.ReplaceIdempotencyKey(ctx, next, prev) })
	got, err = getIdem(t, s, r.Scope, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "key after the takeover", canonIdem(got, keep), canonIdem(next, stored))

	// A second takeover from the same (now outdated) previous record loses.
	again := next
	again.Fingerprint = "fp-3"
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.ReplaceIdempotencyKey(ctx, again, prev) })
	wantKind(t, "second ReplaceIdempotencyKey from the same previous record", err, apperr.Conflict)

	// A key that does not exist cannot be taken over.
	ghost := sampleIdem(r.Scope)
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.ReplaceIdempotencyKey(ctx, ghost, ghost) })
	wantKind(t, "ReplaceIdempotencyKey of a missing key", err, apperr.Conflict)
	_, err = getIdem(t, s, ghost.Scope, ghost.Key)
	wantKind(t, "GetIdempotencyKey after a refused takeover of a missing key", err, apperr.NotFound)
}

func testIdemDelete(t *testing.T, s store.Store) {
	r := sampleIdem(newID("scope"))
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, r) })
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key) })
	_, err := getIdem(t, s, r.Scope, r.Key)
	wantKind(t, "GetIdempotencyKey after delete", err, apperr.NotFound)
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key) // missing: not an error
	})
	// The key can be claimed again.
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotencyKey(ctx, r) })
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key) })
}

func testIdemListStale(t *testing.T, s store.Store) {
	base, scope := window(), newID("scope")
	now := sec(base, 100)
	rec := func(key string, st idempotency.Status, locked, expires time.Time) idempotency.Record {
		return idempotency.Record{Scope: scope, Key: key, Fingerprint: "fp", Status: st,
			LockedUntil: locked, CreatedAt: base, ExpiresAt: expires}
	}
	done, busy := idempotency.StatusCompleted, idempotency.StatusInProgress
	recs := []idempotency.Record{
		rec("expired", done, time.Time{}, sec(base, 10)),
		rec("expires-exactly-now", done, time.Time{}, now),
		rec("live", done, time.Time{}, sec(base, 500)),
		rec("never-expires", done, time.Time{}, time.Time{}),
		rec("lock-lapsed", busy, sec(base, 50), sec(base, 500)),
		rec("lock-ends-exactly-now", busy, now, sec(base, 500)),
		rec("lock-zero", busy, time.Time{}, sec(base, 500)),
		rec("locked", busy, sec(base, 200), sec(base, 500)),
		rec("completed-old-lock", done, sec(base, 1), sec(base, 500)),
	}
	want := []string{"expired", "expires-exactly-now", "lock-lapsed", "lock-ends-exactly-now", "lock-zero"}
	if features.ExpiryByTTL {
		// Expired keys are left to the TTL: only lapsed locks are listed.
		want = []string{"lock-lapsed", "lock-ends-exactly-now", "lock-zero"}
	}
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, r := range recs {
			if err := tx.DeleteIdempotencyKey(ctx, r.Scope, r.Key); err != nil {
				return err
			}
		}
		return nil
	})
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, r := range recs {
			if err := tx.InsertIdempotencyKey(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListStaleIdempotencyKeys(ctx, now, 1000)
		if err != nil {
			return err
		}
		var mine []string
		for _, r := range got {
			if idempotency.Decide(r, r.Fingerprint, now) != idempotency.Proceed {
				t.Errorf("ListStaleIdempotencyKeys returned live key %s/%s (%+v)", r.Scope, r.Key, r)
			}
			if r.Scope == scope {
				mine = append(mine, r.Key)
			}
		}
		sort.Strings(mine)
		sort.Strings(want)
		if !equalIDs(mine, want) {
			t.Errorf("stale keys %v, want %v", mine, want)
		}
		got, err = tx.ListStaleIdempotencyKeys(ctx, now, 2)
		if err != nil {
			return err
		}
		if len(got) != 2 {
			t.Errorf("ListStaleIdempotencyKeys(limit 2) returned %d keys, want 2", len(got))
		}
		return nil
	})
}
