package storetest

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
)

var outboxTests = []subtest{
	{"round_trip", testOutboxRoundTrip},
	{"not_found", testOutboxNotFound},
	{"duplicate_insert", testOutboxDuplicate},
	{"update_versions", testOutboxUpdate},
	{"list_due", testOutboxListDue},
	{"earliest_pending", testEarliestPending},
	{"backlog", testOutboxBacklog},
	{"delete_published", testDeletePublished},
}

// uniqueShard returns a shard number no other subtest uses.
func uniqueShard() int { return 1_000_000 + rand.IntN(1<<30) }

func outboxID(e outbox.Event) string { return e.ID }

// sampleEvent is a published event that no list of another subtest finds.
func sampleEvent() outbox.Event {
	return outbox.Event{
		ID: newID("evt"), Shard: uniqueShard(), AggregateType: "order", AggregateID: newID("ord"),
		EventType: outbox.TypeOrderCreated, Destination: outbox.DestOrderEvents, Payload: []byte(`{}`),
		Status: outbox.StatusPublished, CreatedAt: odd, PublishedAt: farFuture, Version: 1,
	}
}

func insertEvents(t *testing.T, s store.Store, es ...outbox.Event) {
	t.Helper()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range es {
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// retireEvents marks events dead when the test ends (if they still exist),
// so that no backlog or due list of another run counts them.
func retireEvents(t *testing.T, s store.Store, ids ...string) {
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, id := range ids {
			e, err := tx.GetOutbox(ctx, id)
			if apperr.Is(err, apperr.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if e.Status != outbox.StatusPending {
				continue
			}
			e.Status = outbox.StatusDead
			e.Version++
			if err := tx.UpdateOutbox(ctx, e, e.Version-1); err != nil {
				return err
			}
		}
		return nil
	})
}

func getEvent(t *testing.T, s store.Store, id string) (outbox.Event, error) {
	var e outbox.Event
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		e, err = tx.GetOutbox(ctx, id)
		return err
	})
	return e, err
}

func testOutboxRoundTrip(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		e    outbox.Event
	}{
		{"every_field", outbox.Event{
			ID: newID("evt"), Shard: 7, AggregateType: "order", AggregateID: newID("ord"),
			EventType: outbox.TypeSagaAdvance, Destination: outbox.DestSagaCommands,
			Payload:  []byte(`{"saga_id":"s-1","note":"привет 👋"}`),
			Metadata: map[string]string{outbox.AttrCorrelationID: "corr-✓", outbox.AttrOrderID: "ord-1", "empty": ""},
			Status:   outbox.StatusDead, Attempts: 9, NextAttemptAt: odd.Add(time.Minute), LeaseOwner: "relay-1",
			LeaseUntil: odd.Add(time.Second), LastError: "send failed: 503", CreatedAt: odd,
			PublishedAt: odd.Add(time.Hour), Version: 5,
		}},
		{"zero_values", outbox.Event{ID: newID("evt")}},
		{"empty_map_and_payload", outbox.Event{ID: newID("evt"), Metadata: map[string]string{}, Payload: []byte{},
			Status: outbox.StatusDead, CreatedAt: epoch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			insertEvents(t, s, tc.e)
			got, err := getEvent(t, s, tc.e.ID)
			if err != nil {
				t.Fatalf("GetOutbox: %v", err)
			}
			wantEqual(t, "GetOutbox", canonOutbox(got, keep), canonOutbox(tc.e, stored))
		})
	}
}

func testOutboxNotFound(t *testing.T, s store.Store) {
	_, err := getEvent(t, s, newID("missing"))
	wantKind(t, "GetOutbox of a missing id", err, apperr.NotFound)
}

func testOutboxDuplicate(t *testing.T, s store.Store) {
	e := sampleEvent()
	insertEvents(t, s, e)
	dup := e
	dup.EventType = "other"
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertOutbox(ctx, dup) })
	wantKind(t, "second InsertOutbox with the same id", err, apperr.Conflict)
	got, err := getEvent(t, s, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "event after a refused duplicate", canonOutbox(got, keep), canonOutbox(e, stored))
}

func testOutboxUpdate(t *testing.T, s store.Store) {
	e := sampleEvent()
	insertEvents(t, s, e)
	next := e
	next.Status, next.Attempts, next.LastError, next.Version = outbox.StatusDead, 3, "gave up", 2
	next.Metadata = map[string]string{"k": "v"}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOutbox(ctx, next, 1) })
	stale := next
	stale.Version = 3
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOutbox(ctx, stale, 1) })
	wantKind(t, "UpdateOutbox with a stale expected version", err, apperr.Conflict)
	missing := sampleEvent()
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateOutbox(ctx, missing, 1) })
	wantKind(t, "UpdateOutbox of a missing event", err, apperr.NotFound)
	got, err := getEvent(t, s, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "event after update", canonOutbox(got, keep), canonOutbox(next, stored))
}

func testOutboxListDue(t *testing.T, s store.Store) {
	base, shard := window(), uniqueShard()
	now := sec(base, 100)
	mk := func(name string, shard int, st outbox.Status, created, next, lease time.Time) outbox.Event {
		return outbox.Event{ID: name + "-" + newID("evt"), Shard: shard, AggregateID: newID("agg"),
			Status: st, CreatedAt: created, NextAttemptAt: next, LeaseUntil: lease, Version: 1}
	}
	pending := outbox.StatusPending
	due := []outbox.Event{
		mk("retry-due", shard, pending, sec(base, 1), sec(base, 50), time.Time{}),
		mk("tie-a", shard, pending, sec(base, 3), time.Time{}, time.Time{}),
		mk("tie-b", shard, pending, sec(base, 3), time.Time{}, sec(base, 60)),
		mk("lease-ends-now", shard, pending, sec(base, 4), now, now),
	}
	notDue := []outbox.Event{
		mk("leased", shard, pending, sec(base, 2), time.Time{}, sec(base, 200)),
		mk("not-yet", shard, pending, sec(base, 2), sec(base, 150), time.Time{}),
		mk("published", shard, outbox.StatusPublished, sec(base, 0), time.Time{}, time.Time{}),
		mk("dead", shard, outbox.StatusDead, sec(base, 0), time.Time{}, time.Time{}),
		mk("other-shard", shard+1, pending, sec(base, 0), time.Time{}, time.Time{}),
	}
	// Expected order: CreatedAt, then ID (the tie).
	sort.SliceStable(due, func(i, j int) bool {
		if !due[i].CreatedAt.Equal(due[j].CreatedAt) {
			return due[i].CreatedAt.Before(due[j].CreatedAt)
		}
		return due[i].ID < due[j].ID
	})
	all := append(append([]outbox.Event(nil), due...), notDue...)
	insertEvents(t, s, all...)
	retireEvents(t, s, idsOf(all, outboxID)...)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, tc := range []struct {
			name  string
			limit int
			want  []outbox.Event
		}{{"all", 1000, due}, {"limit", 2, due[:2]}} {
			got, err := tx.ListOutboxDue(ctx, shard, now, tc.limit)
			if err != nil {
				return err
			}
			if ids, want := idsOf(got, outboxID), idsOf(tc.want, outboxID); !equalIDs(ids, want) {
				t.Errorf("ListOutboxDue(%s) ids\n got %v\nwant %v", tc.name, ids, want)
			}
		}
		got, err := tx.ListOutboxDue(ctx, shard, now, 1)
		if err == nil && len(got) == 1 {
			wantEqual(t, "ListOutboxDue row", canonOutbox(got[0], keep), canonOutbox(due[0], stored))
		}
		return err
	})
}

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
	wantA := min(a[1].ID, a[2].ID) // the tie on CreatedAt goes to the smaller ID

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
