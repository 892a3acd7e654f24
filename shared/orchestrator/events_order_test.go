package orchestrator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/outbox"
	"ordersaga/shared/sqlitestore"
	"ordersaga/shared/store"
)

// A new row whose aggregate still has an older pending row must not be
// dispatched ahead of it: it is written unleased, for the relay, which sends
// an aggregate's rows in creation order.
func TestInsertEventsNeverOvertakesAnOlderPendingRow(t *testing.T) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "ev.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, agg string, at time.Time, leased bool) outbox.Event {
		e := outbox.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: outbox.TypeOrderConfirmed,
			Destination: outbox.DestOrderEvents, Payload: []byte(`{}`), Status: outbox.StatusPending,
			NextAttemptAt: at, CreatedAt: at, Version: 1}
		if leased {
			e.LeaseOwner, e.LeaseUntil = "advancer", at.Add(10*time.Second)
		}
		return e
	}
	var dispatch []outbox.Event
	err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		// order.created of order A failed to send and is backing off.
		if err := tx.InsertOutbox(ctx, mk("old-a", "order-a", now, false)); err != nil {
			return err
		}
		var err error
		dispatch, err = insertEvents(ctx, tx, []outbox.Event{mk("new-a", "order-a", now.Add(time.Second), true), mk("new-b", "order-b", now.Add(time.Second), true)}, nil, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dispatch) != 1 || dispatch[0].ID != "new-b" {
		t.Fatalf("dispatch %v, want only new-b", dispatch)
	}
	_ = s.View(ctx, func(ctx context.Context, tx store.Tx) error {
		e, err := tx.GetOutbox(ctx, "new-a")
		if err != nil || e.LeaseOwner != "" || !e.LeaseUntil.IsZero() {
			t.Errorf("new-a = %+v, %v; want stored without a lease", e, err)
		}
		return nil
	})
}
