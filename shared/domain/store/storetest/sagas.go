package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

var sagaTests = []subtest{
	{"round_trip", testSagaRoundTrip},
	{"not_found", testSagaNotFound},
	{"duplicate_insert", testSagaDuplicate},
	{"update_versions", testSagaUpdate},
	{"list_due", testSagaListDue},
	{"list_by_state", testSagaListByState},
	{"count_updated_since", testSagaCountSince},
	{"log", testSagaLog},
}

func getSaga(t *testing.T, s store.Store, id string) (saga.Instance, error) {
	var in saga.Instance
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		in, err = tx.GetSaga(ctx, id)
		return err
	})
	return in, err
}

// finishSagas marks sagas completed when the test ends, so that no other
// run's due list finds them.
func finishSagas(t *testing.T, s store.Store, ids ...string) {
	cleanup(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, id := range ids {
			in, err := tx.GetSaga(ctx, id)
			if err != nil {
				return err
			}
			in.State, in.NextAttemptAt, in.UpdatedAt = saga.StateCompleted, farFuture, farFuture
			in.Version++
			if err := tx.UpdateSaga(ctx, in, in.Version-1); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertSagas(t *testing.T, s store.Store, in ...saga.Instance) {
	t.Helper()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, x := range in {
			if err := tx.InsertSaga(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
}

func testSagaRoundTrip(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		in   saga.Instance
	}{
		{"every_field", saga.Instance{
			ID: newID("saga"), Type: saga.TypeCreateOrder, State: saga.StateCompensated,
			Data: saga.Data{OrderID: "ord-1", CustomerID: "Клиент ✓", Currency: "RUB", TotalMinor: 1 << 60,
				Items:         []saga.DataItem{{SKU: "a", Quantity: 2, UnitPriceMinor: 3}, {SKU: "б", Quantity: 1, UnitPriceMinor: 1}},
				FailureReason: "payment declined: недостаточно средств"},
			Step: 3, Attempts: 7, LeaseOwner: "advancer-1", LeaseUntil: odd.Add(time.Minute),
			NextAttemptAt: odd.Add(2 * time.Minute), LastError: "timeout ⏱", CorrelationID: "idem-key-1",
			CreatedAt: odd, UpdatedAt: odd.Add(time.Second), FinishedAt: odd.Add(time.Hour), Version: 12,
		}},
		// Zero values in a finished state, so no due list ever finds it.
		{"zero_values", saga.Instance{ID: newID("saga"), State: saga.StateFailed}},
		{"epoch_and_empty_items", saga.Instance{ID: newID("saga"), State: saga.StateCompleted,
			Data: saga.Data{Items: []saga.DataItem{}}, CreatedAt: epoch, NextAttemptAt: farFuture}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			insertSagas(t, s, tc.in)
			got, err := getSaga(t, s, tc.in.ID)
			if err != nil {
				t.Fatalf("GetSaga: %v", err)
			}
			wantEqual(t, "GetSaga", canonSaga(got, keep), canonSaga(tc.in, stored))
		})
	}
}

func testSagaNotFound(t *testing.T, s store.Store) {
	_, err := getSaga(t, s, newID("missing"))
	wantKind(t, "GetSaga of a missing id", err, apperr.NotFound)
}

func testSagaDuplicate(t *testing.T, s store.Store) {
	in := sampleSaga()
	insertSagas(t, s, in)
	dup := in
	dup.Type = "other"
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertSaga(ctx, dup) })
	wantKind(t, "second InsertSaga with the same id", err, apperr.Conflict)
	got, err := getSaga(t, s, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "saga after a refused duplicate", canonSaga(got, keep), canonSaga(in, stored))
}

func testSagaUpdate(t *testing.T, s store.Store) {
	in := sampleSaga()
	insertSagas(t, s, in)
	next := in
	next.State, next.Step, next.LastError, next.Version = saga.StateCompensated, 2, "declined", 2
	next.Data.Items = []saga.DataItem{{SKU: "x", Quantity: 1, UnitPriceMinor: 9}}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSaga(ctx, next, 1) })
	stale := next
	stale.Version = 3
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSaga(ctx, stale, 1) })
	wantKind(t, "UpdateSaga with a stale expected version", err, apperr.Conflict)
	missing := sampleSaga()
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSaga(ctx, missing, 1) })
	wantKind(t, "UpdateSaga of a missing saga", err, apperr.NotFound)
	got, err := getSaga(t, s, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "saga after update", canonSaga(got, keep), canonSaga(next, stored))
}

func testSagaListDue(t *testing.T, s store.Store) {
	base := window()
	now := sec(base, 100)
	mk := func(name string, st saga.State, next, lease time.Time) saga.Instance {
		return saga.Instance{ID: name + "-" + newID("saga"), Type: saga.TypeCreateOrder, State: st,
			NextAttemptAt: next, LeaseUntil: lease, LeaseOwner: "w", UpdatedAt: farFuture, Version: 1}
	}
	due := []saga.Instance{ // in the expected order: oldest NextAttemptAt first
		mk("running-lease-expired", saga.StateRunning, sec(base, 5), sec(base, 50)),
		mk("pending", saga.StatePending, sec(base, 10), time.Time{}),
		mk("compensating", saga.StateCompensating, sec(base, 20), time.Time{}),
		mk("lease-ends-exactly-now", saga.StateRunning, sec(base, 30), now),
		mk("due-exactly-now", saga.StatePending, now, time.Time{}),
	}
	notDue := []saga.Instance{
		mk("not-yet", saga.StatePending, sec(base, 200), time.Time{}),
		mk("leased", saga.StateRunning, sec(base, 1), sec(base, 150)),
		mk("completed", saga.StateCompleted, sec(base, 1), time.Time{}),
		mk("compensated", saga.StateCompensated, sec(base, 1), time.Time{}),
		mk("failed", saga.StateFailed, sec(base, 1), time.Time{}),
	}
	all := append(append([]saga.Instance(nil), due...), notDue...)
	insertSagas(t, s, all...)
	finishSagas(t, s, idsOf(all, sagaID)...)
	mine := setOf(idsOf(all, sagaID)...)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListSagasDue(ctx, now, 1000)
		if err != nil {
			return err
		}
		checkDueSagas(t, got, now)
		if ids, want := onlyMine(idsOf(got, sagaID), mine), idsOf(due, sagaID); !equalIDs(ids, want) {
			t.Errorf("ListSagasDue ids\n got %v\nwant %v", ids, want)
		}
		got, err = tx.ListSagasDue(ctx, now, 2)
		if err != nil {
			return err
		}
		if ids, want := idsOf(got, sagaID), idsOf(due[:2], sagaID); !equalIDs(ids, want) {
			t.Errorf("ListSagasDue(limit 2) ids\n got %v\nwant %v", ids, want)
		}
		// Before anything is due, none of ours is listed.
		got, err = tx.ListSagasDue(ctx, sec(base, 1), 1000)
		if err != nil {
			return err
		}
		if ids := onlyMine(idsOf(got, sagaID), mine); len(ids) != 0 {
			t.Errorf("ListSagasDue before anything is due returned %v", ids)
		}
		return nil
	})
}

// checkDueSagas checks what holds for every listed saga, ours or not.
func checkDueSagas(t *testing.T, got []saga.Instance, now time.Time) {
	t.Helper()
	for _, in := range got {
		if in.State.Finished() || in.NextAttemptAt.After(now) || in.LeaseUntil.After(now) {
			t.Errorf("ListSagasDue(%v) returned a saga that is not due: %+v", now, in)
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].NextAttemptAt.Before(got[j].NextAttemptAt) }) {
		t.Errorf("ListSagasDue is not ordered by NextAttemptAt: %v", idsOf(got, sagaID))
	}
}

func sagaID(in saga.Instance) string { return in.ID }

func testSagaListByState(t *testing.T, s store.Store) {
	base := window()
	mk := func(st saga.State, updated time.Time) saga.Instance {
		return saga.Instance{ID: newID("saga"), State: st, NextAttemptAt: farFuture, UpdatedAt: updated, Version: 1}
	}
	comp := saga.StateCompensating
	want := []saga.Instance{mk(comp, sec(base, 5)), mk(comp, sec(base, 10)), mk(comp, sec(base, 50))}
	other := mk(saga.StateRunning, sec(base, 1))
	all := append(append([]saga.Instance(nil), want...), other)
	insertSagas(t, s, all...)
	finishSagas(t, s, idsOf(all, sagaID)...)
	mine := setOf(idsOf(all, sagaID)...)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, tc := range []struct {
			name   string
			before time.Time
			limit  int
			want   []saga.Instance
		}{
			{"before the third", sec(base, 50), 1000, reversed(want[:2])},
			{"exactly at the first (exclusive)", sec(base, 5), 1000, nil},
			{"zero means any time", time.Time{}, 100000, reversed(want)},
			{"limit", sec(base, 3600), 1, want[len(want)-1:]},
		} {
			got, err := tx.ListSagasByState(ctx, comp, tc.before, tc.limit)
			if err != nil {
				return err
			}
			for _, in := range got {
				if in.State != comp || (!tc.before.IsZero() && !in.UpdatedAt.Before(tc.before)) {
					t.Errorf("%s: ListSagasByState returned %+v", tc.name, in)
				}
			}
			if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].UpdatedAt.After(got[j].UpdatedAt) }) {
				t.Errorf("%s: ListSagasByState is not ordered newest UpdatedAt first", tc.name)
			}
			if ids, w := onlyMine(idsOf(got, sagaID), mine), idsOf(tc.want, sagaID); !equalIDs(ids, w) {
				t.Errorf("%s: ListSagasByState ids\n got %v\nwant %v", tc.name, ids, w)
			}
		}
		return nil
	})
}

// testSagaCountSince checks CountSagasUpdatedSince by differences of counts
// at bounds inside this subtest's window, so rows of other subtests (later
// times, counted alike at every bound) cancel out.
func testSagaCountSince(t *testing.T, s store.Store) {
	base := window()
	mk := func(st saga.State, updated time.Time) saga.Instance {
		return saga.Instance{ID: newID("saga"), State: st, NextAttemptAt: farFuture, UpdatedAt: updated, Version: 1}
	}
	comp := saga.StateCompensating
	all := []saga.Instance{mk(comp, sec(base, 5)), mk(comp, sec(base, 10)), mk(comp, sec(base, 50)), mk(saga.StateRunning, sec(base, 7))}
	insertSagas(t, s, all...)
	finishSagas(t, s, idsOf(all, sagaID)...)
	const big = 100000
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		count := func(st saga.State, since time.Time, limit int) int {
			n, err := tx.CountSagasUpdatedSince(ctx, st, since, limit)
			if err != nil {
				t.Fatalf("CountSagasUpdatedSince(%s, %v, %d): %v", st, since, limit, err)
			}
			return n
		}
		at5, at6, at11, at51 := count(comp, sec(base, 5), big), count(comp, sec(base, 6), big), count(comp, sec(base, 11), big), count(comp, sec(base, 51), big)
		for _, c := range []struct {
			name      string
			got, want int
		}{
			{"since the first (inclusive) minus after the last", at5 - at51, 3},
			{"the first alone", at5 - at6, 1},
			{"the second alone", at6 - at11, 1},
			{"the third alone", at11 - at51, 1},
			{"another state is not counted", count(saga.StateRunning, sec(base, 5), big) - count(saga.StateRunning, sec(base, 8), big), 1},
			{"limit caps the count", count(comp, sec(base, 5), 2), 2},
			{"limit 0 counts nothing", count(comp, sec(base, 5), 0), 0},
		} {
			if c.got != c.want {
				t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
			}
		}
		return nil
	})
}

func testSagaLog(t *testing.T, s store.Store) {
	in := sampleSaga()
	insertSagas(t, s, in)
	entry := func(seq int, step string, dir saga.Direction, out saga.Outcome) saga.LogEntry {
		return saga.LogEntry{SagaID: in.ID, Seq: seq, Step: step, Direction: dir, Outcome: out,
			Attempt: seq + 1, Error: "ошибка " + step, StateAfter: saga.StateRunning,
			DurationMS: int64(seq) * 1000, At: odd.Add(time.Duration(seq) * time.Second), MessageID: newID("msg")}
	}
	entries := []saga.LogEntry{
		entry(2, "process_payment", saga.Forward, saga.OutcomeFailed),
		entry(0, "create_order", saga.Forward, saga.OutcomeSucceeded),
		entry(1, "reserve_inventory", saga.Forward, saga.OutcomeSucceeded),
		{SagaID: in.ID, Seq: 3}, // zero values
	}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range entries {
			if err := tx.AppendSagaLog(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	dup := entry(1, "other", saga.Compensate, saga.OutcomeSkipped)
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.AppendSagaLog(ctx, dup) })
	wantKind(t, "AppendSagaLog of an existing seq", err, apperr.Conflict)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListSagaLog(ctx, in.ID)
		if err != nil {
			return err
		}
		want := []saga.LogEntry{entries[1], entries[2], entries[0], entries[3]}
		if len(got) != len(want) {
			t.Fatalf("ListSagaLog returned %d entries, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			wantEqual(t, "ListSagaLog entry", canonLog(got[i], keep), canonLog(want[i], stored))
		}
		none, err := tx.ListSagaLog(ctx, newID("missing"))
		if err != nil || len(none) != 0 {
			t.Errorf("ListSagaLog of an unknown saga = %v, %v; want empty, nil", none, err)
		}
		return nil
	})
}

func reversed(in []saga.Instance) []saga.Instance {
	out := make([]saga.Instance, len(in))
	for i, v := range in {
		out[len(in)-1-i] = v
	}
	return out
}
