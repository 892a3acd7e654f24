package storetest

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

var inboxTests = []subtest{
	{"dedupe", testInboxDedupe},
	{"delete_expired", testInboxDeleteExpired},
}

func insertInbox(t *testing.T, s store.Store, consumer, msg string, at, expires time.Time) error {
	return tryTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertInbox(ctx, consumer, msg, at, expires)
	})
}

func testInboxDedupe(t *testing.T, s store.Store) {
	consumer, other, msg := newID("consumer"), newID("consumer"), newID("msg")
	if err := insertInbox(t, s, consumer, msg, odd, farFuture); err != nil {
		t.Fatalf("first InsertInbox: %v", err)
	}
	wantKind(t, "second InsertInbox of the same message", insertInbox(t, s, consumer, msg, odd, farFuture), apperr.Conflict)
	if err := insertInbox(t, s, other, msg, odd, farFuture); err != nil {
		t.Errorf("InsertInbox of the same message for another consumer: %v", err)
	}
	if err := insertInbox(t, s, consumer, newID("msg"), odd, farFuture); err != nil {
		t.Errorf("InsertInbox of another message: %v", err)
	}
}

func testInboxDeleteExpired(t *testing.T, s store.Store) {
	base, consumer := window(), newID("consumer")
	now := sec(base, 100)
	expired := map[string]time.Time{"m1": sec(base, 1), "m2": sec(base, 2), "m-now": now}
	live := map[string]time.Time{"m-later": sec(base, 500), "m-never": time.Time{}}
	for _, set := range []map[string]time.Time{expired, live} {
		for msg, exp := range set {
			if err := insertInbox(t, s, consumer, msg, base, exp); err != nil {
				t.Fatalf("InsertInbox %s: %v", msg, err)
			}
		}
	}
	var n1, n2 int
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n1, err = tx.DeleteExpiredInbox(ctx, now, 1)
		return err
	})
	if features.ExpiryByTTL {
		// The TTL deletes expired entries in the background (whenever it
		// runs); the purge deletes nothing, and live entries deduplicate.
		if n1 != 0 {
			t.Errorf("DeleteExpiredInbox with ExpiryByTTL deleted %d, want 0", n1)
		}
		for msg := range live {
			wantKind(t, "InsertInbox of live entry "+msg, insertInbox(t, s, consumer, msg, base, farFuture), apperr.Conflict)
		}
		return
	}
	if n1 != 1 {
		t.Errorf("DeleteExpiredInbox(limit 1) deleted %d, want 1", n1)
	}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n2, err = tx.DeleteExpiredInbox(ctx, now, 1000)
		return err
	})
	if n2 < len(expired)-1 {
		t.Errorf("second DeleteExpiredInbox deleted %d, want at least %d", n2, len(expired)-1)
	}
	// Deleted entries can be recorded again; live ones (a zero expiry never
	// expires) still deduplicate.
	for msg := range expired {
		if err := insertInbox(t, s, consumer, msg, base, farFuture); err != nil {
			t.Errorf("InsertInbox of deleted entry %s: %v", msg, err)
		}
	}
	for msg := range live {
		wantKind(t, "InsertInbox of live entry "+msg, insertInbox(t, s, consumer, msg, base, farFuture), apperr.Conflict)
	}
}
