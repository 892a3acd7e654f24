package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// The relay's batched outbox work (store.OutboxBatch), added to the outbox group.
func init() {
	outboxTests = append(outboxTests,
		subtest{"list_due_from_shard", testOutboxListDueFrom},
		subtest{"lease_batch", testLeaseOutbox},
		subtest{"mark_published_batch", testMarkOutboxPublished},
	)
}

func testOutboxListDueFrom(t *testing.T, s store.Store) {
	base, shard := window(), uniqueShard()
	now := sec(base, 100)
	mk := func(name string, shard int, created time.Time, lease time.Time) outbox.Event {
		return outbox.Event{ID: name + "-" + newID("evt"), Shard: shard, AggregateID: newID("agg"),
			Status: outbox.StatusPending, CreatedAt: created, LeaseUntil: lease, Version: 1}
	}
	due := []outbox.Event{
		mk("above-far", shard+7, sec(base, 1), time.Time{}),
		mk("at", shard, sec(base, 2), time.Time{}),
		mk("above", shard+1, sec(base, 3), time.Time{}),
	}
	notDue := []outbox.Event{
		mk("below", shard-1, sec(base, 0), time.Time{}),
		mk("above-leased", shard+1, sec(base, 0), sec(base, 500)),
	}
	all := append(append([]outbox.Event(nil), due...), notDue...)
	// Expected order: as ListOutboxDue (all are due since the zero time: by ID).
	sort.Slice(due, func(i, j int) bool { return due[i].ID < due[j].ID })
	insertEvents(t, s, all...)
	retireEvents(t, s, idsOf(all, outboxID)...)
	mine := setOf(idsOf(all, outboxID)...)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListOutboxDueFrom(ctx, shard, now, 1000)
		if err != nil {
			return err
		}
		if g, w := onlyMine(idsOf(got, outboxID), mine), idsOf(due, outboxID); !equalIDs(g, w) {
			t.Errorf("ListOutboxDueFrom = %v, want %v (shards >= %d, earliest next attempt first)", g, w, shard)
		}
		if got, err := tx.ListOutboxDueFrom(ctx, shard, now, 0); err != nil || len(got) != 0 {
			t.Errorf("limit 0 = %v, %v", got, err)
		}
		return nil
	})
}

func testLeaseOutbox(t *testing.T, s store.Store) {
	base := window()
	mk := func(name string) outbox.Event {
		return outbox.Event{ID: name + "-" + newID("evt"), Shard: uniqueShard(), AggregateID: newID("agg"),
			Status: outbox.StatusPending, Payload: []byte(`{"k":1}`), Metadata: map[string]string{"a": "b"},
			CreatedAt: sec(base, 1), NextAttemptAt: sec(base, 2), Attempts: 2, LastError: "earlier", Version: 1}
	}
	a, b, stale := mk("a"), mk("b"), mk("stale")
	insertEvents(t, s, a, b, stale)
	retireEvents(t, s, a.ID, b.ID, stale.ID)
	until := sec(base, 30)
	var n int
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n, err = tx.LeaseOutbox(ctx, []store.OutboxVersion{{ID: a.ID, Version: 1}, {ID: b.ID, Version: 1}, {ID: stale.ID, Version: 7}, {ID: newID("missing"), Version: 1}}, "relay-1", until)
		return err
	})
	if n != 2 {
		t.Errorf("LeaseOutbox changed %d rows, want 2", n)
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range []outbox.Event{a, b} {
			got, err := tx.GetOutbox(ctx, e.ID)
			if err != nil {
				return err
			}
			want := e
			want.LeaseOwner, want.LeaseUntil, want.Version = "relay-1", until, 2
			wantEqual(t, "leased row", canonOutbox(got, keep), canonOutbox(want, stored))
		}
		got, err := tx.GetOutbox(ctx, stale.ID)
		if err != nil {
			return err
		}
		wantEqual(t, "row at another version", canonOutbox(got, keep), canonOutbox(stale, stored))
		return nil
	})
	if err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error {
		n, err := tx.LeaseOutbox(ctx, nil, "r", until)
		if n != 0 {
			t.Errorf("empty lease changed %d", n)
		}
		return err
	}); err != nil {
		t.Errorf("LeaseOutbox(nil): %v", err)
	}
}

func testMarkOutboxPublished(t *testing.T, s store.Store) {
	base := window()
	mk := func(name string) outbox.Event {
		return outbox.Event{ID: name + "-" + newID("evt"), Shard: uniqueShard(), AggregateID: newID("agg"),
			Status: outbox.StatusPending, Payload: []byte(`{}`), CreatedAt: sec(base, 1), NextAttemptAt: sec(base, 2),
			LeaseOwner: "relay-1", LeaseUntil: sec(base, 30), Attempts: 1, LastError: "once", Version: 3}
	}
	a, b, stale := mk("a"), mk("b"), mk("stale")
	insertEvents(t, s, a, b, stale)
	retireEvents(t, s, a.ID, b.ID, stale.ID)
	at := sec(base, 10)
	var n int
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n, err = tx.MarkOutboxPublished(ctx, []store.OutboxVersion{{ID: a.ID, Version: 3}, {ID: b.ID, Version: 3}, {ID: stale.ID, Version: 2}}, at)
		return err
	})
	if n != 2 {
		t.Errorf("MarkOutboxPublished changed %d rows, want 2", n)
	}
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range []outbox.Event{a, b} {
			got, err := tx.GetOutbox(ctx, e.ID)
			if err != nil {
				return err
			}
			want := e
			want.Status, want.PublishedAt, want.LeaseOwner, want.LeaseUntil, want.LastError, want.Version =
				outbox.StatusPublished, at, "", time.Time{}, "", 4
			wantEqual(t, "published row", canonOutbox(got, keep), canonOutbox(want, stored))
		}
		got, err := tx.GetOutbox(ctx, stale.ID)
		if err != nil {
			return err
		}
		wantEqual(t, "row at another version", canonOutbox(got, keep), canonOutbox(stale, stored))
		// Published rows are no longer due.
		due, err := tx.ListOutboxDueFrom(ctx, a.Shard, farFuture.Add(-time.Hour), 1000)
		if err != nil {
			return err
		}
		for _, e := range due {
			if e.ID == a.ID {
				t.Error("a published row is still listed as due")
			}
		}
		return nil
	})
}
