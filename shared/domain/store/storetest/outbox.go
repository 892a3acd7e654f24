package storetest

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

var outboxTests = []subtest{
	{"round_trip", testOutboxRoundTrip},
	{"not_found", testOutboxNotFound},
	{"duplicate_insert", testOutboxDuplicate},
	{"update_versions", testOutboxUpdate},
	{"list_due", testOutboxListDue},
	{"earliest_pending", testEarliestPending},
	{"earliest_pending_ignores_clocks", testEarliestPendingIgnoresClocks},
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
	// Expected order: NextAttemptAt (the zero time first), then ID.
	sort.SliceStable(due, func(i, j int) bool {
		if !due[i].NextAttemptAt.Equal(due[j].NextAttemptAt) {
			return due[i].NextAttemptAt.Before(due[j].NextAttemptAt)
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

// testEarliestPendingIgnoresClocks: an aggregate's events go out in the
// order their transactions wrote them, even when a later writer's clock is
// behind (with a 3 s skew, ordering by the writer's clock would let
// order.confirmed overtake order.created). Updates keep a row's place.
func testEarliestPendingIgnoresClocks(t *testing.T, s store.Store) {
	base := window()
	agg := newID("agg-skew")
	mk := func(created time.Time) outbox.Event {
		return outbox.Event{ID: newID("evt"), Shard: uniqueShard(), AggregateType: "order", AggregateID: agg,
			EventType: outbox.TypeOrderCreated, Destination: outbox.DestOrderEvents, Payload: []byte(`{}`),
			Metadata: map[string]string{}, Status: outbox.StatusPending, CreatedAt: created,
			NextAttemptAt: farFuture, Version: 1}
	}
	first := mk(sec(base, 10)) // written first by an instance whose clock is ahead
	second := mk(sec(base, 7)) // written later by one 3 s behind
	third := mk(sec(base, 1))  // and later still, further behind
	insertEvents(t, s, first)
	insertEvents(t, s, second)
	insertEvents(t, s, third)
	retireEvents(t, s, first.ID, second.ID, third.ID)
	earliest := func() string {
		var got map[string]string
		mustView(t, s, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.EarliestPending(ctx, []string{agg})
			return err
		})
		return got[agg]
	}
	if got := earliest(); got != first.ID {
		t.Fatalf("EarliestPending = %s, want the first written %s (not the earliest CreatedAt)", got, first.ID)
	}
	// An update (a failed send backing off) does not move it back.
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		e, err := tx.GetOutbox(ctx, first.ID)
		if err != nil {
			return err
		}
		e.Attempts, e.LastError, e.Version = 1, "boom", e.Version+1
		return tx.UpdateOutbox(ctx, e, e.Version-1)
	})
	if got := earliest(); got != first.ID {
		t.Fatalf("after an update: EarliestPending = %s, want %s", got, first.ID)
	}
	publish := func(id string) {
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
			e, err := tx.GetOutbox(ctx, id)
			if err != nil {
				return err
			}
			e.Status, e.PublishedAt, e.Version = outbox.StatusPublished, farFuture, e.Version+1
			return tx.UpdateOutbox(ctx, e, e.Version-1)
		})
	}
	publish(first.ID)
	if got := earliest(); got != second.ID {
		t.Fatalf("after publishing the first: EarliestPending = %s, want %s", got, second.ID)
	}
	publish(second.ID)
	if got := earliest(); got != third.ID {
		t.Fatalf("after publishing the second: EarliestPending = %s, want %s", got, third.ID)
	}
}
