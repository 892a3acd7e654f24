package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

var deadLetterTests = []subtest{
	{"round_trip", testDeadLetterRoundTrip},
	{"update_delete", testDeadLetterUpdateDelete},
	{"find_newest", testFindDeadLetter},
	{"filters", testDeadLetterFilters},
	{"pagination", testDeadLetterPages},
	{"pagination_undated", testDeadLetterPagesUndated},
}

func deadLetterID(d dlq.DeadLetter) string { return d.ID }

func insertDeadLetters(t *testing.T, s store.Store, ds ...dlq.DeadLetter) {
	t.Helper()
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, d := range ds {
			if err := tx.InsertDeadLetter(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func getDeadLetter(t *testing.T, s store.Store, id string) (dlq.DeadLetter, error) {
	var d dlq.DeadLetter
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		d, err = tx.GetDeadLetter(ctx, id)
		return err
	})
	return d, err
}

func testDeadLetterRoundTrip(t *testing.T, s store.Store) {
	cases := []struct {
		name string
		d    dlq.DeadLetter
	}{
		{"every_field", dlq.DeadLetter{
			ID: newID("dl"), Source: dlq.SourceOutbox, SourceRef: newID("evt"), Queue: "order-events",
			Payload: []byte("{\"x\":\"полезная нагрузка\"}\x00\xff"), Attrs: map[string]string{"event_type": "order.created", "ключ": "значение"},
			ErrorType: "transient", Error: "send failed: 503 ⚠", RetryCount: 10,
			FirstFailedAt: odd, LastFailedAt: odd.Add(time.Hour),
			History: []dlq.Failure{
				{At: odd, ErrorType: "transient", Error: "timeout"},
				{At: odd.Add(time.Hour), ErrorType: "internal", Error: "ошибка"},
				{ErrorType: "zero time"},
			},
			Status: dlq.StatusResolved, RedriveCount: 3, Flagged: true, ResolvedAt: odd.Add(2 * time.Hour),
			ResolvedBy: "admin@example", IdempotencyKey: "key-1", OrderID: newID("ord"), OutboxEventID: newID("evt"),
			SagaID: newID("saga"), CreatedAt: odd, UpdatedAt: odd.Add(3 * time.Hour), Version: 8,
		}},
		{"zero_values", dlq.DeadLetter{ID: newID("dl")}},
		{"empty_collections", dlq.DeadLetter{ID: newID("dl"), Payload: []byte{}, Attrs: map[string]string{},
			History: []dlq.Failure{}, LastFailedAt: epoch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			insertDeadLetters(t, s, tc.d)
			got, err := getDeadLetter(t, s, tc.d.ID)
			if err != nil {
				t.Fatalf("GetDeadLetter: %v", err)
			}
			wantEqual(t, "GetDeadLetter", canonDeadLetter(got, keep), canonDeadLetter(tc.d, stored))
			dup := tc.d
			dup.Error = "other"
			err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDeadLetter(ctx, dup) })
			wantKind(t, "second InsertDeadLetter with the same id", err, apperr.Conflict)
		})
	}
	_, err := getDeadLetter(t, s, newID("missing"))
	wantKind(t, "GetDeadLetter of a missing id", err, apperr.NotFound)
}

func testDeadLetterUpdateDelete(t *testing.T, s store.Store) {
	d := dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceQueue, SourceRef: newID("msg"), Status: dlq.StatusOpen,
		LastFailedAt: odd, Version: 1}
	insertDeadLetters(t, s, d)
	next := d
	next.Status, next.Flagged, next.RedriveCount, next.Version = dlq.StatusRedriven, true, 1, 2
	next.History = []dlq.Failure{{At: odd, ErrorType: "e", Error: "x"}}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateDeadLetter(ctx, next, 1) })
	stale := next
	stale.Version = 3
	err := tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateDeadLetter(ctx, stale, 1) })
	wantKind(t, "UpdateDeadLetter with a stale expected version", err, apperr.Conflict)
	ghost := dlq.DeadLetter{ID: newID("dl"), Version: 2}
	err = tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateDeadLetter(ctx, ghost, 1) })
	wantKind(t, "UpdateDeadLetter of a missing entry", err, apperr.NotFound)
	got, err := getDeadLetter(t, s, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "dead letter after update", canonDeadLetter(got, keep), canonDeadLetter(next, stored))

	mustTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteDeadLetter(ctx, d.ID) })
	_, err = getDeadLetter(t, s, d.ID)
	wantKind(t, "GetDeadLetter after delete", err, apperr.NotFound)
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteDeadLetter(ctx, d.ID) // missing: not an error
	})
}

func testFindDeadLetter(t *testing.T, s store.Store) {
	ref := newID("evt")
	older := dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceOutbox, SourceRef: ref, Status: dlq.StatusRedriven,
		CreatedAt: odd, LastFailedAt: odd}
	newer := dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceOutbox, SourceRef: ref, Status: dlq.StatusOpen,
		CreatedAt: odd.Add(time.Minute), LastFailedAt: odd.Add(time.Minute)}
	otherSource := dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceSaga, SourceRef: ref,
		CreatedAt: odd.Add(time.Hour), LastFailedAt: odd.Add(time.Hour)}
	insertDeadLetters(t, s, newer, older, otherSource)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.FindDeadLetter(ctx, dlq.SourceOutbox, ref)
		if err != nil {
			return err
		}
		wantEqual(t, "FindDeadLetter", canonDeadLetter(got, keep), canonDeadLetter(newer, stored))
		_, err = tx.FindDeadLetter(ctx, dlq.SourceQueue, ref)
		wantKind(t, "FindDeadLetter with no match", err, apperr.NotFound)
		return nil
	})
}

// listIDs lists one page and returns the ids and the next cursor.
func listIDs(t *testing.T, s store.Store, f dlq.Filter, p dlq.Page) ([]string, string) {
	t.Helper()
	var (
		ids  []string
		next string
	)
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, cur, err := tx.ListDeadLetters(ctx, f, p)
		ids, next = idsOf(got, deadLetterID), cur
		return err
	})
	return ids, next
}

func testDeadLetterFilters(t *testing.T, s store.Store) {
	base, uid := window(), newID("")
	from, to := base, sec(base, 3600) // every filter but one is confined to this window
	e1, e2 := "E1"+uid, "E2"+uid
	o1, o2, s1, s2 := "o1"+uid, "o2"+uid, "s1"+uid, "s2"+uid
	mk := func(src dlq.Source, st dlq.Status, errType, orderID, sagaID string, flagged bool, last int) dlq.DeadLetter {
		return dlq.DeadLetter{ID: newID("dl"), Source: src, SourceRef: newID("ref"), Status: st, ErrorType: errType,
			OrderID: orderID, SagaID: sagaID, Flagged: flagged, LastFailedAt: sec(base, last), CreatedAt: base}
	}
	d1 := mk(dlq.SourceQueue, dlq.StatusOpen, e1, o1, s1, false, 10)
	d2 := mk(dlq.SourceOutbox, dlq.StatusRedriven, e2, o2, s2, true, 20)
	d3 := mk(dlq.SourceSaga, dlq.StatusResolved, e1, o1, s2, false, 30)
	d4 := mk(dlq.SourceQueue, dlq.StatusDiscarded, e2, o2, s1, true, 40)
	insertDeadLetters(t, s, d1, d2, d3, d4)
	yes, no := true, false
	ids := func(ds ...dlq.DeadLetter) []string { return idsOf(ds, deadLetterID) }
	for _, tc := range []struct {
		name string
		f    dlq.Filter
		want []string
	}{
		{"window only", dlq.Filter{}, ids(d4, d3, d2, d1)},
		{"source", dlq.Filter{Source: dlq.SourceQueue}, ids(d4, d1)},
		{"status", dlq.Filter{Status: dlq.StatusResolved}, ids(d3)},
		{"error type", dlq.Filter{ErrorType: e1}, ids(d3, d1)},
		{"order id", dlq.Filter{OrderID: o2}, ids(d4, d2)},
		{"saga id", dlq.Filter{SagaID: s2}, ids(d3, d2)},
		{"flagged", dlq.Filter{Flagged: &yes}, ids(d4, d2)},
		{"not flagged", dlq.Filter{Flagged: &no}, ids(d3, d1)},
		{"combined", dlq.Filter{Source: dlq.SourceQueue, Flagged: &yes}, ids(d4)},
		{"no match", dlq.Filter{Source: dlq.SourceSaga, Status: dlq.StatusOpen}, nil},
		{"from inclusive, to exclusive", dlq.Filter{From: sec(base, 20), To: sec(base, 40)}, ids(d3, d2)},
		{"only from", dlq.Filter{From: sec(base, 30), OrderID: o1}, ids(d3)},
		{"only to", dlq.Filter{To: sec(base, 30), ErrorType: e2}, ids(d2)},
	} {
		f := tc.f
		if f.From.IsZero() && f.To.IsZero() {
			f.From, f.To = from, to
		}
		got, next := listIDs(t, s, f, dlq.Page{Limit: 100})
		if !equalIDs(got, tc.want) || next != "" {
			t.Errorf("%s: ListDeadLetters = %v, cursor %q; want %v, no cursor", tc.name, got, next, tc.want)
		}
	}
}

func testDeadLetterPages(t *testing.T, s store.Store) {
	base, orderID := window(), newID("ord")
	var ds []dlq.DeadLetter
	for _, last := range []int{1, 2, 2, 2, 3, 4, 4} { // ties on LastFailedAt are ordered by ID
		ds = append(ds, dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceQueue, OrderID: orderID,
			Status: dlq.StatusOpen, LastFailedAt: sec(base, last), CreatedAt: base})
	}
	insertDeadLetters(t, s, ds...)
	sort.Slice(ds, func(i, j int) bool {
		if !ds[i].LastFailedAt.Equal(ds[j].LastFailedAt) {
			return ds[i].LastFailedAt.After(ds[j].LastFailedAt)
		}
		return ds[i].ID > ds[j].ID
	})
	want := idsOf(ds, deadLetterID)
	f := dlq.Filter{OrderID: orderID}
	for _, limit := range []int{1, 2, 3, 7, 100} {
		var (
			all   []string
			sizes []int
			cur   string
		)
		for page := 0; page < 10; page++ {
			ids, next := listIDs(t, s, f, dlq.Page{Limit: limit, Cursor: cur})
			all, sizes = append(all, ids...), append(sizes, len(ids))
			if next == "" {
				break
			}
			if len(ids) != limit {
				t.Errorf("limit %d: a page with a next cursor holds %d entries", limit, len(ids))
			}
			cur = next
		}
		if !equalIDs(all, want) {
			t.Errorf("limit %d: pages %v joined\n got %v\nwant %v", limit, sizes, all, want)
		}
		if wantPages := (len(want) + limit - 1) / limit; len(sizes) != wantPages {
			t.Errorf("limit %d: %d pages %v, want %d (no empty last page)", limit, len(sizes), sizes, wantPages)
		}
	}
	// A cursor keeps working with the same filter after new entries arrive before it.
	first, cur := listIDs(t, s, f, dlq.Page{Limit: 3})
	fresh := dlq.DeadLetter{ID: newID("dl"), OrderID: orderID, LastFailedAt: sec(base, 9), CreatedAt: base}
	insertDeadLetters(t, s, fresh)
	rest, _ := listIDs(t, s, f, dlq.Page{Limit: 100, Cursor: cur})
	if got := append(first, rest...); !equalIDs(got, want) {
		t.Errorf("pages across an insert\n got %v\nwant %v", got, want)
	}
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		_, _, err := tx.ListDeadLetters(ctx, f, dlq.Page{Limit: 3, Cursor: "not a cursor!"})
		return err
	})
	wantKind(t, "ListDeadLetters with a malformed cursor", err, apperr.Invalid)
}

// Entries without a LastFailedAt (the zero time) are the oldest: listed
// after every dated entry (ties by ID descending), on every page size, with
// and without a status filter; a To bound keeps them, a From bound drops
// them. (On YDB they are a branch of their own: a NULL key prefix.)
func testDeadLetterPagesUndated(t *testing.T, s store.Store) {
	base, orderID := window(), newID("ord")
	var ds []dlq.DeadLetter
	for i, last := range []int{-1, 5, -1, 5, 7, -1, 1} { // -1: no LastFailedAt
		d := dlq.DeadLetter{ID: newID("dl"), Source: dlq.SourceSaga, OrderID: orderID, Status: dlq.StatusOpen, CreatedAt: base}
		if i%2 == 1 {
			d.Status = dlq.StatusResolved
		}
		if last >= 0 {
			d.LastFailedAt = sec(base, last)
		}
		ds = append(ds, d)
	}
	insertDeadLetters(t, s, ds...)
	sort.Slice(ds, func(i, j int) bool {
		a, b := ds[i].LastFailedAt, ds[j].LastFailedAt
		if a.IsZero() != b.IsZero() {
			return b.IsZero()
		}
		if !a.Equal(b) {
			return a.After(b)
		}
		return ds[i].ID > ds[j].ID
	})
	only := func(keep func(dlq.DeadLetter) bool) []string {
		var out []string
		for _, d := range ds {
			if keep(d) {
				out = append(out, d.ID)
			}
		}
		return out
	}
	all := func(dlq.DeadLetter) bool { return true }
	for _, tc := range []struct {
		name string
		f    dlq.Filter
		want []string
	}{
		{"order", dlq.Filter{OrderID: orderID}, only(all)},
		{"order and status", dlq.Filter{OrderID: orderID, Status: dlq.StatusOpen},
			only(func(d dlq.DeadLetter) bool { return d.Status == dlq.StatusOpen })},
		{"to keeps the undated", dlq.Filter{OrderID: orderID, To: sec(base, 6)},
			only(func(d dlq.DeadLetter) bool { return d.LastFailedAt.Before(sec(base, 6)) })},
		{"from drops the undated", dlq.Filter{OrderID: orderID, From: sec(base, 2)},
			only(func(d dlq.DeadLetter) bool { return !d.LastFailedAt.Before(sec(base, 2)) })},
	} {
		for _, limit := range []int{1, 2, 3, 100} {
			var (
				got []string
				cur string
			)
			for page := 0; page < 10; page++ {
				ids, next := listIDs(t, s, tc.f, dlq.Page{Limit: limit, Cursor: cur})
				got = append(got, ids...)
				if next == "" {
					break
				}
				cur = next
			}
			if !equalIDs(got, tc.want) {
				t.Errorf("%s, limit %d:\n got %v\nwant %v", tc.name, limit, got, tc.want)
			}
		}
	}
}
