package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/outbox"
	"ordersaga/shared/store"
)

// The first row of an aggregate created in its transaction
// (outbox.Event.NewAggregate) is numbered 1 without the look-up; the rows
// written after it are numbered on from it, so EarliestPending still gives
// the first.
func TestNewAggregateRowIsNumberedFirst(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "agg.db"), Options{})
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(id string, first bool, created time.Time) outbox.Event {
		return outbox.Event{ID: id, AggregateType: "order", AggregateID: "agg", EventType: outbox.TypeOrderConfirmed,
			Destination: outbox.DestOrderEvents, Payload: []byte(`{}`), Status: outbox.StatusPending,
			NextAttemptAt: created, CreatedAt: created, Version: 1, NewAggregate: first}
	}
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		// The later row carries the earlier timestamp: only the sequence
		// number can put the first row first.
		if err := tx.InsertOutbox(ctx, row("first", true, at.Add(time.Minute))); err != nil {
			return err
		}
		return tx.InsertOutbox(ctx, row("second", false, at))
	})
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[string]int{}
	rows, err := s.DB().Query(`SELECT id, aggregate_seq FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var seq int
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		seqs[id] = seq
	}
	rows.Close()
	if seqs["first"] != 1 || seqs["second"] != 2 {
		t.Fatalf("sequence numbers %v, want first 1, second 2", seqs)
	}
	var earliest map[string]string
	_ = s.View(ctx, func(ctx context.Context, tx store.Tx) error {
		earliest, err = tx.EarliestPending(ctx, []string{"agg"})
		return err
	})
	if err != nil || earliest["agg"] != "first" {
		t.Fatalf("EarliestPending = %v, %v; want first", earliest, err)
	}
}
