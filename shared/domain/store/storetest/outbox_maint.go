package storetest

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// The outbox queries of the relay's ordering check, metrics and cleanup.

func testEarliestPending(t *testing.T, s store.Store) {
	base := window()
	aggA, aggB, aggC, aggD := newID("agg-a"), newID("agg-b"), newID("agg-c"), newID("agg-d")
	mk := func(agg string, st outbox.Status, created int) outbox.Event {
		return outbox.Event{ID: newID("evt"), Shard: uniqueShard(), AggregateID: agg, Status: st,
			CreatedAt: sec(base, created), NextAttemptAt: farFuture, Version: 1}
	}
	pending := outbox.StatusPending
	a := []outbox.Event{mk(aggA, pending, 5), mk(aggA, pending, 3), mk(aggA, pending, 3), mk(aggA, outbox.StatusPublished, 1)}
	b := []outbox.Event{mk(aggB, outbox.StatusPublished, 1), mk(aggB, outbox.StatusDead, 2)}
	c := []outbox.Event{mk(aggC, pending, 9)}
	all := append(append(append([]outbox.Event(nil), a...), b...), c...)
	insertEvents(t, s, all...)
	retireEvents(t, s, idsOf(all, outboxID)...)
	wantA := a[0].ID // the first written, although a[1] and a[2] carry earlier CreatedAt

	// More ids than one IN list should hold, with ours spread across them.
	ids := make([]string, 1200)
	for i := range ids {
		ids[i] = newID("agg-none")
	}
	ids[0], ids[499], ids[500], ids[1100] = aggA, aggB, aggC, aggD
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, tc := range []struct {
			name string
			ids  []string
			want map[string]string
		}{
			{"many ids", ids, map[string]string{aggA: wantA, aggC: c[0].ID}},
			{"one id", []string{aggC}, map[string]string{aggC: c[0].ID}},
			{"none pending", []string{aggB, aggD}, map[string]string{}},
			{"no ids", nil, map[string]string{}},
		} {
			got, err := tx.EarliestPending(ctx, tc.ids)
			if err != nil {
				return err
			}
			if len(got) == 0 {
				got = map[string]string{}
			}
			wantEqual(t, "EarliestPending "+tc.name, got, tc.want)
		}
		return nil
	})
}

func testOutboxBacklog(t *testing.T, s store.Store) {
	base := window()
	var n0 int
	mustView(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n0, _, err = tx.OutboxBacklog(ctx)
		return err
	})
	mk := func(st outbox.Status, created int) outbox.Event {
		return outbox.Event{ID: newID("evt"), Shard: uniqueShard(), AggregateID: newID("agg"), Status: st,
			CreatedAt: sec(base, created), NextAttemptAt: farFuture, Version: 1}
	}
	es := []outbox.Event{mk(outbox.StatusPending, 30), mk(outbox.StatusPending, 10), mk(outbox.StatusPending, 20),
		mk(outbox.StatusPublished, 1), mk(outbox.StatusDead, 2)}
	insertEvents(t, s, es...)
	retireEvents(t, s, idsOf(es, outboxID)...)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		n1, oldest, err := tx.OutboxBacklog(ctx)
		if err != nil {
			return err
		}
		if n1-n0 != 3 {
			t.Errorf("OutboxBacklog pending grew by %d, want 3", n1-n0)
		}
		switch {
		case oldest.IsZero() || oldest.After(sec(base, 10)):
			t.Errorf("OutboxBacklog oldest %v, want at or before %v", oldest, sec(base, 10))
		case n0 == 0 && !oldest.Equal(sec(base, 10)):
			t.Errorf("OutboxBacklog oldest %v, want %v", oldest, sec(base, 10))
		}
		return nil
	})
}

func testDeletePublished(t *testing.T, s store.Store) {
	base := window()
	before := sec(base, 100)
	mk := func(st outbox.Status, published time.Time) outbox.Event {
		return outbox.Event{ID: newID("evt"), Shard: uniqueShard(), AggregateID: newID("agg"), Status: st,
			CreatedAt: base, PublishedAt: published, NextAttemptAt: farFuture, Version: 1}
	}
	old := []outbox.Event{
		mk(outbox.StatusPublished, sec(base, 1)), mk(outbox.StatusPublished, sec(base, 2)),
		mk(outbox.StatusPublished, sec(base, 3)),
	}
	keepers := []outbox.Event{
		mk(outbox.StatusPublished, before), // not before t
		mk(outbox.StatusPublished, sec(base, 500)),
		mk(outbox.StatusPending, time.Time{}),
		mk(outbox.StatusDead, sec(base, 1)),
	}
	insertEvents(t, s, append(append([]outbox.Event(nil), old...), keepers...)...)
	retireEvents(t, s, idsOf(keepers, outboxID)...)
	var n1, n2 int
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n1, err = tx.DeletePublishedOutbox(ctx, before, 2)
		return err
	})
	if features.ExpiryByTTL {
		// The TTL deletes published rows in the background (whenever it
		// runs); the purge deletes nothing, and the keepers are intact.
		retireEvents(t, s, idsOf(old, outboxID)...)
		if n1 != 0 {
			t.Errorf("DeletePublishedOutbox with ExpiryByTTL deleted %d rows, want 0", n1)
		}
		for _, e := range keepers {
			if _, err := getEvent(t, s, e.ID); err != nil {
				t.Errorf("GetOutbox after a purge that deletes nothing: %v", err)
			}
		}
		return
	}
	if n1 != 2 {
		t.Errorf("DeletePublishedOutbox(limit 2) deleted %d rows, want 2", n1)
	}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		n2, err = tx.DeletePublishedOutbox(ctx, before, 1000)
		return err
	})
	if n2 < 1 {
		t.Errorf("second DeletePublishedOutbox deleted %d rows, want at least the 1 left", n2)
	}
	for _, e := range old {
		_, err := getEvent(t, s, e.ID)
		wantKind(t, "GetOutbox of a deleted published event", err, apperr.NotFound)
	}
	for _, e := range keepers {
		got, err := getEvent(t, s, e.ID)
		if err != nil {
			t.Errorf("GetOutbox of a row that must survive: %v", err)
			continue
		}
		wantEqual(t, "surviving event", canonOutbox(got, keep), canonOutbox(e, stored))
	}
}
