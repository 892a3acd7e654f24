package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// An aggregate's rows are first-to-last in write order (their rowids), even
// when the newest row of the table is deleted (its rowid is then given
// again) and even when the clocks say otherwise.
func TestEarliestPendingIsWriteOrderAfterTheNewestRowIsDeleted(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "rowid.db"), Config{})
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(id, agg string, st outbox.Status, created time.Time) outbox.Event {
		return outbox.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: outbox.TypeOrderConfirmed,
			Destination: outbox.DestOrderEvents, Payload: []byte(`{}`), Status: st,
			NextAttemptAt: created, CreatedAt: created, PublishedAt: created, Version: 1}
	}
	in := func(events ...outbox.Event) {
		t.Helper()
		if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			for _, e := range events {
				if err := tx.InsertOutbox(ctx, e); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	earliest := func() string {
		t.Helper()
		var got map[string]string
		if err := s.View(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.EarliestPending(ctx, []string{"a"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got["a"]
	}
	in(row("a-first", "a", outbox.StatusPending, at.Add(time.Hour))) // a later clock
	in(row("newest", "b", outbox.StatusPublished, at.Add(-48*time.Hour)))
	if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		n, err := tx.DeletePublishedOutbox(ctx, at, 10)
		if err == nil && n != 1 {
			t.Fatalf("deleted %d published rows, want the newest row", n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	in(row("a-second", "a", outbox.StatusPending, at)) // takes the deleted row's rowid
	if got := earliest(); got != "a-first" {
		t.Fatalf("EarliestPending = %q, want a-first (written first)", got)
	}
	in(row("a-third", "a", outbox.StatusPending, at.Add(-time.Hour)), row("a-fourth", "a", outbox.StatusPending, at.Add(-2*time.Hour)))
	if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.(store.SQLTx).ExecContext(ctx, `UPDATE outbox SET status = 'published' WHERE id IN ('a-first', 'a-second')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := earliest(); got != "a-third" {
		t.Fatalf("EarliestPending = %q, want a-third (written before a-fourth in one transaction)", got)
	}
}
