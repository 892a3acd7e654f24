package orders

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/transport/identity"
)

// waitingStore makes every transaction wait for the writer: the clock moves
// on by wait before the transaction's body runs.
type waitingStore struct {
	*sqlitestore.Store
	clock *fakeclock.Clock
	wait  time.Duration
}

func (s waitingStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	s.clock.Advance(s.wait)
	return s.Store.InTx(ctx, fn)
}

// recordingDispatcher keeps the rows Create hands it after commit.
type recordingDispatcher struct{ got []outbox.Event }

func (d *recordingDispatcher) Dispatch(_ context.Context, events []outbox.Event) {
	d.got = append(d.got, events...)
}

// The order is drafted before its transaction (ids, JSON, rows), and drafted
// again at the transaction's time when the wait for the store was longer
// than draftSlack (or the clock went back): the stamps, the response and the
// rows' dispatch lease then follow the transaction's clock, and a short
// wait costs the lease at most that wait.
func TestCreateDraftsAgainAfterALongWait(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		wait      time.Duration
		stampedAt time.Time
	}{
		"short wait keeps the early draft":   {wait: 300 * time.Millisecond, stampedAt: t0},
		"wait beyond the slack drafts again": {wait: draftSlack + time.Millisecond, stampedAt: t0.Add(draftSlack + time.Millisecond)},
		"clock went back drafts again":       {wait: -time.Second, stampedAt: t0.Add(-time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "draft.db"), sqlitestore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			clock := fakeclock.New(t0)
			disp := &recordingDispatcher{}
			s, err := New(Config{Store: waitingStore{Store: st, clock: clock, wait: tc.wait}, Dispatcher: disp, Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			cmd := CreateCommand{Caller: identity.Identity{Subject: "c"}, Key: "k-draft", RequestID: "r-1",
				Request: order.Request{CustomerID: "c", Currency: "RUB", Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 10}}}}
			resp, err := s.Create(context.Background(), cmd)
			if err != nil {
				t.Fatal(err)
			}
			err = st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
				o, err := tx.GetOrder(ctx, resp.OrderID)
				if err != nil {
					return err
				}
				if !o.CreatedAt.Equal(tc.stampedAt) {
					t.Errorf("order created_at %v, want %v", o.CreatedAt, tc.stampedAt)
				}
				inst, err := tx.GetSaga(ctx, resp.SagaID)
				if err != nil {
					return err
				}
				if !inst.CreatedAt.Equal(tc.stampedAt) || inst.Data.OrderID != resp.OrderID {
					t.Errorf("saga created_at %v for order %s, want %v for %s", inst.CreatedAt, inst.Data.OrderID, tc.stampedAt, resp.OrderID)
				}
				rec, err := tx.GetIdempotencyKey(ctx, "c", "k-draft")
				if err != nil {
					return err
				}
				if !rec.CreatedAt.Equal(tc.stampedAt) || rec.ResourceID != resp.OrderID || string(rec.ResponseBody) != string(resp.Body) {
					t.Errorf("key record %+v does not match the response (order %s, stamped %v)", rec, resp.OrderID, tc.stampedAt)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(disp.got) != 2 {
				t.Fatalf("dispatched %d rows, want 2", len(disp.got))
			}
			for _, e := range disp.got {
				if e.Metadata[outbox.AttrOrderID] != resp.OrderID {
					t.Errorf("row %s is for order %s, want %s", e.ID, e.Metadata[outbox.AttrOrderID], resp.OrderID)
				}
				if want := tc.stampedAt.Add(s.cfg.DispatchLease); !e.LeaseUntil.Equal(want) {
					t.Errorf("row %s leased until %v, want %v", e.ID, e.LeaseUntil, want)
				}
				if left := e.LeaseUntil.Sub(clock.Now()); left < s.cfg.DispatchLease*9/10 {
					t.Errorf("row %s has %v of its %v lease left at commit", e.ID, left, s.cfg.DispatchLease)
				}
			}
		})
	}
}
