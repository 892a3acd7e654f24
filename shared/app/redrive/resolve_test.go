package redrive

import (
	"context"
	"testing"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

func TestResolveFinishedResolvesOnlyEntriesOfFinishedSagas(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clock.Now()
	mkSaga := func(id string, st saga.State) saga.Instance {
		return saga.Instance{ID: id, Type: saga.TypeCreateOrder, State: st, Data: saga.Data{OrderID: "o-" + id},
			CreatedAt: now, UpdatedAt: now, NextAttemptAt: now, Version: 1}
	}
	mkDL := func(id, sagaID string) dlq.DeadLetter {
		return dlq.DeadLetter{ID: id, Source: dlq.SourceQueue, SourceRef: "m-" + id, Queue: srcName, Payload: []byte(`{}`),
			ErrorType: ErrorTypeMaxReceives, Error: "moved", RetryCount: 5, FirstFailedAt: now, LastFailedAt: now,
			Status: dlq.StatusOpen, SagaID: sagaID, CreatedAt: now, UpdatedAt: now, Version: 1}
	}
	err := f.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, s := range []saga.Instance{mkSaga("s-done", saga.StateCompleted), mkSaga("s-run", saga.StateRunning)} {
			if err := tx.InsertSaga(ctx, s); err != nil {
				return err
			}
		}
		for _, d := range []dlq.DeadLetter{mkDL("d-done", "s-done"), mkDL("d-run", "s-run"), mkDL("d-none", "")} {
			if err := tx.InsertDeadLetter(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.svc.ResolveFinished(ctx, 100)
	if err != nil || n != 1 {
		t.Fatalf("resolved %d, %v; want 1", n, err)
	}
	want := map[string]dlq.Status{"d-done": dlq.StatusResolved, "d-run": dlq.StatusOpen, "d-none": dlq.StatusOpen}
	_ = f.store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		for id, st := range want {
			d, err := tx.GetDeadLetter(ctx, id)
			if err != nil || d.Status != st {
				t.Errorf("%s: status %s (%v), want %s", id, d.Status, err, st)
			}
			if st == dlq.StatusResolved && (d.ResolvedBy == "" || d.ResolvedAt.IsZero()) {
				t.Errorf("%s: resolved without who/when: %+v", id, d)
			}
		}
		audit, err := tx.ListAudit(ctx, 10)
		if err != nil || len(audit) == 0 || audit[0].Action != "auto_resolve" || audit[0].Actor != ActorSystem {
			t.Errorf("audit %+v %v", audit, err)
		}
		return nil
	})
	// Idempotent: a second run resolves nothing more.
	if n, _ := f.svc.ResolveFinished(ctx, 100); n != 0 {
		t.Errorf("second run resolved %d", n)
	}
}

// A message re-ingested after its entry was closed (a crash between record
// and delete left a copy in the DLQ) does not reopen the entry.
// TestResolveFinishedResolvesOutboxEntriesOfSagaCommands: an outbox dead
// letter of a saga.advance row is resolved once its saga finished; one of
// an order event is not (the event must still be published).
func TestResolveFinishedResolvesOutboxEntriesOfSagaCommands(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clock.Now()
	mkDL := func(id, dest string) dlq.DeadLetter {
		return dlq.DeadLetter{ID: id, Source: dlq.SourceOutbox, SourceRef: "ev-" + id, OutboxEventID: "ev-" + id, Queue: dest,
			Payload: []byte(`{}`), ErrorType: "invalid", Error: "refused", RetryCount: 10, FirstFailedAt: now, LastFailedAt: now,
			Status: dlq.StatusOpen, SagaID: "s-done", CreatedAt: now, UpdatedAt: now, Version: 1}
	}
	err := f.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		s := saga.Instance{ID: "s-done", Type: saga.TypeCreateOrder, State: saga.StateFailed, Data: saga.Data{OrderID: "o-1"},
			CreatedAt: now, UpdatedAt: now, NextAttemptAt: now, Version: 1}
		if err := tx.InsertSaga(ctx, s); err != nil {
			return err
		}
		for _, d := range []dlq.DeadLetter{mkDL("d-cmd", outbox.DestSagaCommands), mkDL("d-event", outbox.DestOrderEvents)} {
			if err := tx.InsertDeadLetter(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.svc.ResolveFinished(ctx, 100); err != nil || n != 1 {
		t.Fatalf("resolved %d, %v; want 1", n, err)
	}
	for id, want := range map[string]dlq.Status{"d-cmd": dlq.StatusResolved, "d-event": dlq.StatusOpen} {
		if d := f.get(t, id); d.Status != want {
			t.Errorf("%s: %s, want %s", id, d.Status, want)
		}
	}
}

func TestReingestDoesNotReopenAClosedEntry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clock.Now()
	err := f.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDeadLetter(ctx, dlq.DeadLetter{ID: "closed", Source: dlq.SourceQueue, SourceRef: "msg-1", Queue: srcName,
			Payload: []byte(`{}`), ErrorType: ErrorTypeMaxReceives, Error: "moved", RetryCount: 3, FirstFailedAt: now,
			LastFailedAt: now, Status: dlq.StatusDiscarded, ResolvedAt: now, ResolvedBy: "ops", CreatedAt: now, UpdatedAt: now, Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.ingestOne(ctx, dlqName, srcName, queue.Message{MessageID: "msg-1", Body: `{}`, ReceiveCount: 4}); err != nil {
		t.Fatal(err)
	}
	_ = f.store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDeadLetter(ctx, "closed")
		if err != nil || d.Status != dlq.StatusDiscarded || d.Version != 1 {
			t.Errorf("entry %+v %v: a re-ingested copy reopened it", d, err)
		}
		return nil
	})
}
