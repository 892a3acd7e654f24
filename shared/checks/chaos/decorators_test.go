package chaos

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// TestFaultyStore: a failure before the closure never runs it; a failure
// after it rolls its writes back; both are Transient.
func TestFaultyStore(t *testing.T) {
	tests := []struct {
		name      string
		f         Faults
		wantRan   bool
		wantErr   bool
		wantStock bool
	}{
		{name: "no fault", wantRan: true, wantStock: true},
		{name: "before", f: Faults{StoreBefore: 1}, wantErr: true},
		{name: "after", f: Faults{StoreAfter: 1}, wantRan: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			inner, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			in := &injector{on: true, rnd: rand.New(rand.NewPCG(1, 2))}
			s := &faultyStore{inner: inner, in: in, f: &tc.f, faults: newTally()}
			ran := false
			err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				ran = true
				return tx.PutStock(ctx, inventory.Stock{SKU: "x", Available: 1, Version: 1}, 0)
			})
			if ran != tc.wantRan || (err != nil) != tc.wantErr || (err != nil && !apperr.Is(err, apperr.Transient)) {
				t.Fatalf("ran %v, err %v; want ran %v, error %v (Transient)", ran, err, tc.wantRan, tc.wantErr)
			}
			err = inner.View(ctx, func(ctx context.Context, tx store.Tx) error { _, err := tx.GetStock(ctx, "x"); return err })
			if got := err == nil; got != tc.wantStock {
				t.Errorf("stock row stored: %v, want %v (%v)", got, tc.wantStock, err)
			}
		})
	}
}

// TestFaultyQueue: a send that fails "after" was sent all the same; a
// receive that fails "after" leaves the message in flight until its
// visibility timeout.
func TestFaultyQueue(t *testing.T) {
	ctx := context.Background()
	c := newClock(0)
	inner, err := sqlitequeue.Open(filepath.Join(t.TempDir(), "q.db"), sqlitequeue.Config{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	url, err := inner.Ensure(ctx, queue.QueueSpec{Name: "q", VisibilityTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := Faults{QueueSend: 1, QueueReceive: 1}
	n := newTally()
	q := &faultyQueue{inner: inner, in: &injector{on: true, rnd: rand.New(rand.NewPCG(1, 2))}, f: &f, faults: n}
	for i := 0; n.get("queue_send_after") == 0; i++ {
		if i > 100 {
			t.Fatal("no send failed after sending")
		}
		if _, err := q.SendBatch(ctx, url, []queue.OutMessage{{ID: "a", Body: "x"}}); !apperr.Is(err, apperr.Transient) {
			t.Fatalf("send: %v, want Transient", err)
		}
	}
	if v, _, _ := inner.Depth(ctx, url); v != 1 {
		t.Fatalf("%d messages visible after one send that failed after sending, want 1", v)
	}
	for i := 0; n.get("queue_receive_after") == 0; i++ {
		if i > 100 {
			t.Fatal("no receive failed after receiving")
		}
		if msgs, err := q.Receive(ctx, url, queue.ReceiveOptions{Max: 10}); err == nil || len(msgs) > 0 {
			t.Fatalf("receive: %d messages, %v; want a Transient error", len(msgs), err)
		}
	}
	if v, inFlight, _ := inner.Depth(ctx, url); v != 0 || inFlight != 1 {
		t.Fatalf("visible %d, in flight %d after a lost receive; want 0, 1", v, inFlight)
	}
	c.Advance(time.Minute + time.Second)
	if msgs, err := inner.Receive(ctx, url, queue.ReceiveOptions{Max: 10}); err != nil || len(msgs) != 1 || msgs[0].ReceiveCount != 2 {
		t.Fatalf("after the visibility timeout: %+v %v; want the message again, second delivery", msgs, err)
	}
}
