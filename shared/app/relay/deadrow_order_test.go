package relay

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// refusing is the embedded queue with one event refused (a queue outage
// that hit one row for all its attempts).
type refusing struct {
	*sqlitequeue.Queue
	refuse map[string]bool // event ids
}

func (q *refusing) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	var pass []queue.OutMessage
	var out []queue.SendResult
	for _, m := range msgs {
		if q.refuse[m.Attributes[outbox.AttrEventID]] {
			out = append(out, queue.SendResult{ID: m.ID, Err: queueDown})
			continue
		}
		pass = append(pass, m)
	}
	if len(pass) > 0 {
		res, err := q.Queue.SendBatch(ctx, url, pass)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

var queueDown = errString("queue unavailable (injected)")

type errString string

func (e errString) Error() string { return string(e) }

// deadCreated is one order whose order.created went dead while the queue
// refused it, with its order.confirmed written after it; the queue is
// healthy again and one relay run has passed since.
type deadCreated struct {
	f     *fixture
	r     *Relay
	evURL string
	dl    dlq.DeadLetter // order.created's outbox dead letter
	svc   *redrive.Service
}

func newDeadCreated(t *testing.T) *deadCreated {
	t.Helper()
	ctx := context.Background()
	f := newFixture(t)
	evURL, err := f.queue.Ensure(ctx, queue.QueueSpec{Name: "order-events", VisibilityTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	add := func(id, typ string) {
		err := f.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertOutbox(ctx, outbox.Row{ID: id, AggregateType: "order", AggregateID: "order-1", EventType: typ,
				Destination: outbox.DestOrderEvents, Payload: []byte(`{"id":"order-1"}`),
				Metadata: map[string]string{outbox.AttrOrderID: "order-1", outbox.AttrSagaID: "saga-1"}}.Pending(1, f.clock.Now()))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	q := &refusing{Queue: f.queue, refuse: map[string]bool{"ev-created": true}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := f.relay(t, "r1", func(c *Config) {
		c.Queue, c.Log = q, log
		c.URLs = map[string]string{outbox.DestOrderEvents: evURL}
	})

	add("ev-created", outbox.TypeOrderCreated)
	add("ev-confirmed", outbox.TypeOrderConfirmed)
	for i := 0; i < 20 && f.event(t, "ev-created").Status != outbox.StatusDead; i++ {
		if _, err := r.Run(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(2 * time.Minute)
	}
	if f.event(t, "ev-created").Status != outbox.StatusDead {
		t.Fatal("setup: order.created never went dead")
	}
	// The queue is healthy again; the relay runs before the operator acts.
	delete(q.refuse, "ev-created")
	if _, err := r.Run(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	var dl dlq.DeadLetter
	err = f.store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		list, _, err := tx.ListDeadLetters(ctx, dlq.Filter{Source: dlq.SourceOutbox}, dlq.Page{Limit: 10})
		if len(list) == 1 {
			dl = list[0]
		}
		return err
	})
	if err != nil || dl.ID == "" {
		t.Fatalf("setup: dead letter %+v %v", dl, err)
	}
	svc, err := redrive.New(redrive.Config{Store: f.store, Now: f.clock.Now, NewID: f.newID, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return &deadCreated{f: f, r: r, evURL: evURL, dl: dl, svc: svc}
}

// published runs the relay once more and returns the event types order-1
// has on order-events, in arrival order.
func (d *deadCreated) published(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := d.r.Run(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		msgs, err := d.f.queue.Receive(ctx, d.evURL, queue.ReceiveOptions{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return got
		}
		for _, m := range msgs {
			got = append(got, m.Attributes[outbox.AttrEventType])
			_ = d.f.queue.Delete(ctx, d.evURL, m.ReceiptHandle)
		}
	}
}

// TestDeadRowDoesNotLetLaterRowsOfItsAggregateOvertakeIt: the
// relay's guarantee is "rows of one aggregate are sent in the order they
// were written". order.created of an order fails until it is dead; its
// order.confirmed, written after it, must keep waiting behind the dead row
// (it was once sent, and the operator's redrive then sent
// order.created after it, so a consumer saw CONFIRMED, then CREATED).
func TestDeadRowDoesNotLetLaterRowsOfItsAggregateOvertakeIt(t *testing.T) {
	d := newDeadCreated(t)
	if got := d.f.event(t, "ev-confirmed").Status; got != outbox.StatusPending {
		t.Fatalf("order.confirmed is %s while order.created is dead, want pending (blocked)", got)
	}
	if rep, err := d.svc.Redrive(context.Background(), "operator", redrive.Selection{IDs: []string{d.dl.ID}}); err != nil || rep.Redriven != 1 {
		t.Fatalf("redrive: %+v %v", rep, err)
	}
	if got := d.published(t); strings.Join(got, " ") != "order.created order.confirmed" {
		t.Errorf("order-events carried %v for order-1, want [order.created order.confirmed]", got)
	}
}

// TestDiscardedDeadRowUnblocksItsAggregate: an operator who discards the
// dead order.created lets the events behind it go: the row becomes
// discarded in the discard's transaction, and order.confirmed is sent.
func TestDiscardedDeadRowUnblocksItsAggregate(t *testing.T) {
	d := newDeadCreated(t)
	if rep, err := d.svc.Discard(context.Background(), "operator", []string{d.dl.ID}, "test: give the event up"); err != nil || rep.Changed != 1 {
		t.Fatalf("discard: %+v %v", rep, err)
	}
	if got := d.f.event(t, "ev-created").Status; got != outbox.StatusDiscarded {
		t.Fatalf("the discarded dead letter's row is %s, want discarded", got)
	}
	if got := d.published(t); strings.Join(got, " ") != "order.confirmed" {
		t.Errorf("order-events carried %v for order-1 after order.created was discarded, want [order.confirmed]", got)
	}
}
