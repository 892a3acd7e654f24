package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// blockedAggregates writes n orders with two order events each, created at
// t0, and holds each order's first event back: dead (i%3 == 0), backing off
// for an hour (i%3 == 1), or dead and then redriven, due at t0+1s
// (i%3 == 2). Then free orders with one event each, due at t0+2s. It
// returns the ids the relay may claim at t0+3s (the redriven first events
// and the free ones) and the ids it must not (every event behind a dead or
// backing-off one, and behind a redriven one until that is published).
func blockedAggregates(t *testing.T, s store.Store, t0 time.Time, n, free int) (claimable, blocked map[string]bool) {
	t.Helper()
	claimable, blocked = map[string]bool{}, map[string]bool{}
	ev := func(id, agg string, at time.Time) outbox.Event {
		return outbox.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: outbox.TypeOrderCreated,
			Destination: outbox.DestOrderEvents, Payload: []byte(`{}`), Metadata: map[string]string{},
			Status: outbox.StatusPending, NextAttemptAt: at, CreatedAt: at, Version: 1}
	}
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := range n {
			agg := fmt.Sprintf("order-%05d", i)
			first, later := ev(fmt.Sprintf("a-%05d", i), agg, t0), ev(fmt.Sprintf("b-%05d", i), agg, t0)
			if err := tx.InsertOutbox(ctx, first); err != nil {
				return err
			}
			if err := tx.InsertOutbox(ctx, later); err != nil {
				return err
			}
			blocked[later.ID] = true
			first.Attempts, first.Version = 1, 2
			switch i % 3 {
			case 0:
				first.Status = outbox.StatusDead
			case 1:
				first.NextAttemptAt = t0.Add(time.Hour)
			case 2:
				first.Status = outbox.StatusDead
				if err := tx.UpdateOutbox(ctx, first, 1); err != nil {
					return err
				}
				first.Status, first.Attempts, first.NextAttemptAt, first.Version = outbox.StatusPending, 0, t0.Add(time.Second), 3
				claimable[first.ID] = true
			}
			if err := tx.UpdateOutbox(ctx, first, first.Version-1); err != nil {
				return err
			}
		}
		for i := range free {
			e := ev(fmt.Sprintf("free-%05d", i), fmt.Sprintf("free-order-%05d", i), t0.Add(2*time.Second))
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
			claimable[e.ID] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return claimable, blocked
}

// The claim's due list finds due rows that may go whatever the number of
// rows blocked behind their aggregate's first row: with 10 000 orders held
// back (dead, backing off, just redriven) and every blocked row older than
// the claimable ones, a list of 100 holds 100 claimable rows, and a list of
// all of them holds every claimable row and no blocked one.
func TestDueListSkipsTenThousandBlockedAggregates(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("10 000 orders: skipped with -short and under -race (the plain run covers it)")
	}
	const n, free = 10000, 150
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openAt(t, filepath.Join(t.TempDir(), "blocked.db"), sqlitestore.Config{})
	claimable, blocked := blockedAggregates(t, s, t0, n, free)
	now := t0.Add(3 * time.Second)
	err := s.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for _, limit := range []int{100, 2 * len(claimable)} {
			due, err := tx.ListOutboxDue(ctx, 0, now, limit)
			if err != nil {
				return err
			}
			ok, bad := 0, 0
			for _, e := range due {
				switch {
				case claimable[e.ID]:
					ok++
				case blocked[e.ID]:
					bad++
				default:
					t.Errorf("unexpected row %s", e.ID)
				}
			}
			want := min(limit, len(claimable))
			t.Logf("list of %d with %d orders blocked: %d rows that may go, %d blocked", limit, n, ok, bad)
			if ok != want || bad != 0 {
				t.Errorf("list of %d: %d rows that may go and %d blocked, want %d and 0", limit, ok, bad, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
