package orchestrator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/store"
)

// A new row whose aggregate still has an older pending row must not be
// dispatched ahead of it: it is written unleased, for the relay, which sends
// an aggregate's rows in creation order.
func TestOutboxWriteNeverOvertakesAnOlderPendingRow(t *testing.T) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "ev.db"), sqlitestore.Config{})
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
		dispatch, err = outboxwrite.Writer{}.Write(ctx, tx, []outbox.Event{mk("new-a", "order-a", now.Add(time.Second), true), mk("new-b", "order-b", now.Add(time.Second), true)}, "")
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

// recordingPublisher is a TxPublisher that "sends" every row it is given,
// and records them.
type recordingPublisher struct{ got []string }

func (p *recordingPublisher) Dispatch(context.Context, []outbox.Event) {}

func (p *recordingPublisher) PublishInTx(_ context.Context, _ store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	out := append([]outbox.Event(nil), events...)
	for i := range out {
		p.got = append(p.got, out[i].ID)
		out[i].Status, out[i].LeaseOwner, out[i].LeaseUntil = outbox.StatusPublished, "", time.Time{}
	}
	return out, nil
}

// Inside the transaction only the rows that may be dispatched now are
// published: never the command the advancer carries on with in place
// (published only if the advancer dies), never an event behind an older
// pending one of its order, never an unleased row. Those published are
// stored published and still returned, for Dispatch to count.
func TestOutboxWritePublishesInTxOnlyWhatMayGoNow(t *testing.T) {
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "ev.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, agg, dest string, leased bool) outbox.Event {
		e := outbox.Event{ID: id, AggregateType: "order", AggregateID: agg, EventType: outbox.TypeOrderConfirmed,
			Destination: dest, Payload: []byte(`{}`), Status: outbox.StatusPending, NextAttemptAt: now, CreatedAt: now, Version: 1}
		if leased {
			e.LeaseOwner, e.LeaseUntil = "advancer", now.Add(10*time.Second)
		}
		return e
	}
	p := &recordingPublisher{}
	w, err := outboxwrite.New(outboxwrite.Config{Dispatcher: p})
	if err != nil {
		t.Fatal(err)
	}
	var dispatch []outbox.Event
	err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOutbox(ctx, mk("old-a", "order-a", outbox.DestOrderEvents, false)); err != nil {
			return err
		}
		var err error
		dispatch, err = w.Write(ctx, tx, []outbox.Event{
			mk("carried", "saga-1", outbox.DestSagaCommands, true),
			mk("cmd-2", "saga-2", outbox.DestSagaCommands, true),
			mk("behind", "order-a", outbox.DestOrderEvents, true),
			mk("free", "order-b", outbox.DestOrderEvents, true),
			mk("unleased", "order-c", outbox.DestOrderEvents, false),
		}, "carried")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cmd-2", "free"}; len(p.got) != 2 || p.got[0] != want[0] || p.got[1] != want[1] {
		t.Fatalf("published in the transaction %v, want %v", p.got, want)
	}
	ids := map[string]outbox.Status{}
	for _, e := range dispatch {
		ids[e.ID] = e.Status
	}
	if len(ids) != 3 || ids["carried"] != outbox.StatusPending || ids["cmd-2"] != outbox.StatusPublished || ids["free"] != outbox.StatusPublished {
		t.Fatalf("dispatch %v, want carried (pending; the caller drops it), cmd-2 and free (published)", ids)
	}
	// Sent in the transaction: the message is the outbox entry, no row is
	// written for it. The others are stored pending.
	_ = s.View(ctx, func(ctx context.Context, tx store.Tx) error {
		for id, want := range map[string]outbox.Status{"carried": outbox.StatusPending,
			"behind": outbox.StatusPending, "unleased": outbox.StatusPending} {
			if e, err := tx.GetOutbox(ctx, id); err != nil || e.Status != want {
				t.Errorf("%s stored as %q (%v), want %q", id, e.Status, err, want)
			}
		}
		for _, id := range []string{"cmd-2", "free"} {
			if e, err := tx.GetOutbox(ctx, id); !apperr.Is(err, apperr.NotFound) {
				t.Errorf("%s, sent in the transaction, stored as %+v (%v), want no row", id, e, err)
			}
		}
		return nil
	})
}
