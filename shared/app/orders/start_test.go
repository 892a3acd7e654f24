package orders

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/transport/identity"
)

// fakeStarter is a SagaStarter that stores the saga itself (at step 1, as
// if a store-only step had run) with a command row of its own, or
// declines (decline).
type fakeStarter struct {
	decline   bool
	starts    int
	inTx      []string // first command ids InTx was given
	committed int
}

func (f *fakeStarter) NewStart() SagaStart { f.starts++; return &fakeStart{f: f} }

type fakeStart struct {
	f   *fakeStarter
	row *outbox.Event
}

func (s *fakeStart) InTx(ctx context.Context, tx store.Tx, inst saga.Instance, o order.Order, first outbox.Event) (bool, error) {
	s.row = nil
	s.f.inTx = append(s.f.inTx, first.ID)
	if inst.Data.OrderID != o.ID || first.AggregateID != inst.ID {
		return false, fmt.Errorf("InTx given saga %s of order %s, order %s, first command of %s", inst.ID, inst.Data.OrderID, o.ID, first.AggregateID)
	}
	if s.f.decline {
		return false, nil
	}
	inst.Step, inst.State = 1, saga.StateRunning
	if err := tx.InsertSaga(ctx, inst); err != nil {
		return false, err
	}
	row := first
	row.ID = first.ID + "-next"
	if err := tx.InsertOutbox(ctx, row); err != nil {
		return false, err
	}
	s.row = &row
	return true, nil
}

func (s *fakeStart) Committed() []outbox.Event {
	s.f.committed++
	if s.row == nil {
		return nil
	}
	return []outbox.Event{*s.row}
}

// dispatchLog records every Dispatch call.
type dispatchLog struct {
	mu    sync.Mutex
	calls [][]string
}

func (d *dispatchLog) Dispatch(_ context.Context, events []outbox.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []string
	for _, e := range events {
		ids = append(ids, e.EventType+":"+e.ID)
	}
	d.calls = append(d.calls, ids)
}

func starterService(t *testing.T, f *fakeStarter) (*Service, *sqlitestore.Store, *dispatchLog) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "orders.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	d := &dispatchLog{}
	n := 0
	s, err := New(Config{Store: st, Dispatcher: d, Starter: f, NewID: func() string { n++; return fmt.Sprintf("id-%02d", n) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, st, d
}

var starterCmd = CreateCommand{Caller: identity.Identity{Subject: "c"}, Key: "k1",
	Request: order.Request{CustomerID: "c", Currency: "RUB", Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 10}}}}

// TestCreateWithAStarter: the start runs in the order's transaction with
// the order, its saga and the draft's first command; the first command is
// not written; the start's rows are dispatched after commit with
// order.created, in one call; a replay starts nothing.
func TestCreateWithAStarter(t *testing.T) {
	f := &fakeStarter{}
	s, st, d := starterService(t, f)
	resp, err := s.Create(context.Background(), starterCmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.inTx) != 1 || f.committed != 1 {
		t.Fatalf("InTx %v, Committed %d times; want once each", f.inTx, f.committed)
	}
	first := f.inTx[0]
	err = st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetOutbox(ctx, first); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("the first command %s was written (%v)", first, err)
		}
		inst, err := tx.GetSaga(ctx, resp.SagaID)
		if err != nil || inst.Step != 1 {
			t.Errorf("saga %+v (%v), want the start's", inst, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.calls) != 1 || len(d.calls[0]) != 2 || d.calls[0][0] != outbox.TypeOrderCreated+":id-04" ||
		d.calls[0][1] != outbox.TypeSagaAdvance+":"+first+"-next" {
		t.Errorf("dispatched %v, want order.created and the start's row in one call", d.calls)
	}
	again, err := s.Create(context.Background(), starterCmd)
	if err != nil || !again.Replayed {
		t.Fatalf("replay %+v, %v", again, err)
	}
	if len(f.inTx) != 1 || f.committed != 1 {
		t.Errorf("a replay ran the start: InTx %v, Committed %d", f.inTx, f.committed)
	}
}

// TestCreateWhenTheStarterDeclines: the saga is stored pending with its
// first command, as without a starter, and Committed is not called.
func TestCreateWhenTheStarterDeclines(t *testing.T) {
	f := &fakeStarter{decline: true}
	s, st, d := starterService(t, f)
	resp, err := s.Create(context.Background(), starterCmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.inTx) != 1 || f.committed != 0 {
		t.Fatalf("InTx %v, Committed %d; want InTx once, no Committed", f.inTx, f.committed)
	}
	err = st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		inst, err := tx.GetSaga(ctx, resp.SagaID)
		if err != nil || inst.State != saga.StatePending || inst.Step != 0 {
			t.Errorf("saga %+v (%v), want pending at step 0", inst, err)
		}
		e, err := tx.GetOutbox(ctx, f.inTx[0])
		if err != nil || e.EventType != outbox.TypeSagaAdvance {
			t.Errorf("first command %+v (%v), want written", e, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.calls) != 1 || len(d.calls[0]) != 2 {
		t.Errorf("dispatched %v, want order.created and the first command", d.calls)
	}
}

// TestCreateStartFailsTheTransaction: a store failure in the start fails
// the request; nothing is stored and nothing dispatched.
func TestCreateStartFailsTheTransaction(t *testing.T) {
	f := &fakeStarter{}
	s, st, d := starterService(t, f)
	// A saga with the id the draft will give it makes the start's insert fail.
	err := st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertSaga(ctx, saga.Instance{ID: "id-02", Type: saga.TypeCreateOrder, State: saga.StateCompleted, Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), starterCmd); err == nil {
		t.Fatal("create succeeded over a failing start")
	}
	if f.committed != 0 || len(d.calls) != 0 {
		t.Errorf("Committed %d, dispatched %v; want nothing", f.committed, d.calls)
	}
	err = st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetIdempotencyKey(ctx, "c", "k1"); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("key stored: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
