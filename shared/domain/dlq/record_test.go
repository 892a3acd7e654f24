package dlq_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "dlq.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func failure(id, ref string, at time.Time, text string) dlq.DeadLetter {
	return dlq.DeadLetter{ID: id, Source: dlq.SourceOutbox, SourceRef: ref, Queue: "saga-commands",
		Payload: []byte(`{"n":1}`), ErrorType: "transient", Error: text, RetryCount: 5, LastFailedAt: at,
		OrderID: "o-1"}
}

func record(t *testing.T, s store.Store, d dlq.DeadLetter, limit int) dlq.DeadLetter {
	t.Helper()
	var got dlq.DeadLetter
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		got, err = dlq.Record(ctx, tx, d, limit)
		return err
	})
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return got
}

func get(t *testing.T, s store.Store, id string) dlq.DeadLetter {
	t.Helper()
	var d dlq.DeadLetter
	err := s.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		d, err = tx.GetDeadLetter(ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// markRedriven simulates a redrive of the entry.
func markRedriven(t *testing.T, s store.Store, id string) {
	t.Helper()
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDeadLetter(ctx, id)
		if err != nil {
			return err
		}
		prev := d.Version
		d.Status, d.RedriveCount, d.Version = dlq.StatusRedriven, d.RedriveCount+1, prev+1
		d.ResolvedAt, d.ResolvedBy = t0, "ops"
		return tx.UpdateDeadLetter(ctx, d, prev)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRecordInsertsWithDefaults(t *testing.T) {
	s := openStore(t)
	got := record(t, s, failure("dl-1", "ev-1", t0, "boom"), 3)
	stored := get(t, s, "dl-1")
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"status", stored.Status, dlq.StatusOpen},
		{"version", stored.Version, int64(1)},
		{"first failed", stored.FirstFailedAt, t0},
		{"created", stored.CreatedAt, t0},
		{"history len", len(stored.History), 1},
		{"history error", stored.History[0].Error, "boom"},
		{"returned version", got.Version, stored.Version},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestRecordMergesIntoTheSameEntry(t *testing.T) {
	s := openStore(t)
	record(t, s, failure("dl-1", "ev-1", t0, "first"), 2)
	markRedriven(t, s, "dl-1")
	got := record(t, s, failure("dl-2", "ev-1", t0.Add(time.Hour), "second"), 2)
	if got.ID != "dl-1" {
		t.Fatalf("merged into %q, want dl-1", got.ID)
	}
	d := get(t, s, "dl-1")
	if d.Status != dlq.StatusOpen || d.RetryCount != 10 || len(d.History) != 2 || d.Error != "second" ||
		!d.LastFailedAt.Equal(t0.Add(time.Hour)) || !d.FirstFailedAt.Equal(t0) || d.RedriveCount != 1 ||
		!d.ResolvedAt.IsZero() || d.ResolvedBy != "" || d.Flagged || d.Version != 3 {
		t.Fatalf("merged entry = %+v", d)
	}
	var n int
	_ = s.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		all, _, err := tx.ListDeadLetters(ctx, dlq.Filter{}, dlq.Page{})
		n = len(all)
		return err
	})
	if n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
}

func TestRecordFlagsAtTheLoopLimit(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		redrives int
		want     bool
	}{
		{"below", 3, 2, false},
		{"at", 3, 3, true},
		{"above", 2, 3, true},
		{"default limit", 0, dlq.DefaultLoopLimit, true},
		{"never redriven", 1, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			record(t, s, failure("dl-1", "ev-1", t0, "fail 0"), tc.limit)
			for i := 1; i <= tc.redrives; i++ {
				markRedriven(t, s, "dl-1")
				record(t, s, failure("x", "ev-1", t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("fail %d", i)), tc.limit)
			}
			if tc.redrives == 0 {
				record(t, s, failure("x", "ev-1", t0.Add(time.Minute), "again"), tc.limit)
			}
			if got := get(t, s, "dl-1").Flagged; got != tc.want {
				t.Fatalf("flagged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRecordRepeatIsANoOp(t *testing.T) {
	s := openStore(t)
	first := record(t, s, failure("dl-1", "ev-1", t0, "message m-1 dead"), 3)
	again := record(t, s, failure("dl-9", "ev-1", t0.Add(time.Minute), "message m-1 dead"), 3)
	if again.Version != first.Version || len(get(t, s, "dl-1").History) != 1 {
		t.Fatalf("a repeated failure changed the entry: %+v", get(t, s, "dl-1"))
	}
	// Once redriven, the same text is a new failure.
	markRedriven(t, s, "dl-1")
	record(t, s, failure("dl-9", "ev-1", t0.Add(2*time.Minute), "message m-1 dead"), 3)
	if d := get(t, s, "dl-1"); len(d.History) != 2 || d.Status != dlq.StatusOpen {
		t.Fatalf("after redrive: %+v", d)
	}
}

func TestRecordKeepsTheLastFailures(t *testing.T) {
	s := openStore(t)
	record(t, s, failure("dl-1", "ev-1", t0, "f0"), 1000)
	for i := 1; i < dlq.MaxHistory+5; i++ {
		markRedriven(t, s, "dl-1")
		record(t, s, failure("x", "ev-1", t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("f%d", i)), 1000)
	}
	d := get(t, s, "dl-1")
	if len(d.History) != dlq.MaxHistory || d.History[0].Error != "f5" || d.History[dlq.MaxHistory-1].Error != "f24" {
		t.Fatalf("history = %d entries, first %q", len(d.History), d.History[0].Error)
	}
}

func TestRecordRejectsIncompleteEntries(t *testing.T) {
	s := openStore(t)
	for _, d := range []dlq.DeadLetter{
		{ID: "a", SourceRef: "r"},
		{ID: "a", Source: dlq.SourceQueue},
		{Source: dlq.SourceQueue, SourceRef: "r"},
	} {
		err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
			_, err := dlq.Record(ctx, tx, d, 3)
			return err
		})
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Record(%+v) = %v, want Invalid", d, err)
		}
	}
}
