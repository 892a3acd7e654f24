package relay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// eventsQueue accepts every message (it keeps their event ids in send
// order) except, while down, those of event type refuse.
type eventsQueue struct {
	queue.Queue
	mu     sync.Mutex
	down   bool
	refuse string
	sent   []string
}

func (q *eventsQueue) SendBatch(_ context.Context, _ string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]queue.SendResult, len(msgs))
	for i, m := range msgs {
		out[i].ID = m.ID
		if q.down && m.Attributes[outbox.AttrEventType] == q.refuse {
			out[i].Err = queueDown
			continue
		}
		out[i].MessageID = "m-" + m.ID
		q.sent = append(q.sent, m.Attributes[outbox.AttrEventID])
	}
	return out, nil
}

func (q *eventsQueue) sentIDs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.sent...)
}

// addOrders writes, for each of n orders, order.created and then
// order.confirmed on order-events (ids c-<i> and f-<i>), all at now.
func addOrders(t *testing.T, f *fixture, prefix string, n int) {
	t.Helper()
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := range n {
			agg := fmt.Sprintf("%s-order-%05d", prefix, i)
			for _, ev := range []struct{ id, typ string }{
				{fmt.Sprintf("%s-c-%05d", prefix, i), outbox.TypeOrderCreated},
				{fmt.Sprintf("%s-f-%05d", prefix, i), outbox.TypeOrderConfirmed},
			} {
				e := outbox.Row{ID: ev.id, AggregateType: "order", AggregateID: agg, EventType: ev.typ,
					Destination: outbox.DestOrderEvents, Payload: []byte(`{}`),
					Metadata: map[string]string{outbox.AttrOrderID: agg}}.Pending(1, f.clock.Now())
				if err := tx.InsertOutbox(ctx, e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkOnceInOrder fails unless every order's order.created and
// order.confirmed were each sent exactly once, created first.
func checkOnceInOrder(t *testing.T, sent []string, prefix string, n int) {
	t.Helper()
	at := map[string]int{}
	for i, id := range sent {
		if _, dup := at[id]; dup {
			t.Fatalf("%s sent twice", id)
		}
		at[id] = i
	}
	for i := range n {
		c, f := fmt.Sprintf("%s-c-%05d", prefix, i), fmt.Sprintf("%s-f-%05d", prefix, i)
		ic, okc := at[c]
		jf, okf := at[f]
		if !okc || !okf || ic > jf {
			t.Fatalf("order %d: created sent=%v at %d, confirmed sent=%v at %d; want both, created first", i, okc, ic, okf, jf)
		}
	}
}

// On a real store: every order.created goes dead
// while the events queue refuses it (RELAY_MAX_ATTEMPTS=1), each order's
// order.confirmed waits behind it, an operator redrives all 10 000 dead
// letters, and the relay publishes every event once, in order per order.
func TestRedriveAfterTenThousandDeadOrderEventsPublishesAll(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("10 000 orders: skipped with -short and under -race (the plain run covers it)")
	}
	const n = 10000
	ctx := context.Background()
	f := newFixture(t)
	q := &eventsQueue{Queue: f.queue, down: true, refuse: outbox.TypeOrderCreated}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := f.relay(t, "r1", func(c *Config) {
		c.Queue, c.Log, c.MaxAttempts = q, log, 1
		c.URLs = map[string]string{outbox.DestOrderEvents: "events"}
	})
	addOrders(t, f, "o", n)

	dead := 0
	for run := 0; run < 20 && dead < n; run++ {
		rep, err := r.Run(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		dead += rep.Dead
		f.clock.Advance(time.Second)
	}
	if dead != n || len(q.sentIDs()) != 0 {
		t.Fatalf("setup: %d of %d order.created dead, %d events sent; want all dead, none sent", dead, n, len(q.sentIDs()))
	}

	q.mu.Lock()
	q.down = false
	q.mu.Unlock()
	svc, err := redrive.New(redrive.Config{Store: f.store, Now: f.clock.Now, NewID: f.newID, Log: log,
		MaxRate: 1e6, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	redriven := 0
	for call := 0; call < 20 && redriven < n; call++ { // a call redrives at most redrive.MaxPerCall
		red, err := svc.Redrive(ctx, "ops", redrive.Selection{All: true, Max: redrive.DefaultMaxPerCall, RatePerSec: 1e6})
		if err != nil {
			t.Fatal(err)
		}
		redriven += red.Redriven
	}
	if redriven != n {
		t.Fatalf("redrive: %d redriven, want %d", redriven, n)
	}

	var reps []Report
	for run := 0; run < 10 && len(q.sentIDs()) < 2*n; run++ {
		f.clock.Advance(time.Second)
		rep, err := r.Run(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	t.Logf("relay runs after the redrive: %+v", reps)
	checkOnceInOrder(t, q.sentIDs(), "o", n)
}

// holdBack holds each order's order.created back: dead (i%3 == 0),
// backing off for an hour (i%3 == 1), or dead and then redriven, due a
// second later than the events behind it (i%3 == 2). It returns the ids
// of the redriven ones.
func holdBack(t *testing.T, f *fixture, prefix string, n int) map[string]bool {
	t.Helper()
	redriven := map[string]bool{}
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := range n {
			e, err := tx.GetOutbox(ctx, fmt.Sprintf("%s-c-%05d", prefix, i))
			if err != nil {
				return err
			}
			e.Attempts, e.Version = 1, e.Version+1
			switch i % 3 {
			case 0:
				e.Status = outbox.StatusDead
			case 1:
				e.NextAttemptAt = f.clock.Now().Add(time.Hour)
			case 2:
				e.Status = outbox.StatusDead
				if err := tx.UpdateOutbox(ctx, e, e.Version-1); err != nil {
					return err
				}
				e.Status, e.Attempts, e.NextAttemptAt, e.Version = outbox.StatusPending, 0, f.clock.Now().Add(time.Second), e.Version+1
				redriven[e.ID] = true
			}
			if err := tx.UpdateOutbox(ctx, e, e.Version-1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return redriven
}

// One claim round with 10 000 orders held back (dead, backing off, just
// redriven) whose later events are older than every row that may go: the
// round claims a full batch, and a run publishes every order that may go
// (the redriven ones with their later events, and the free ones), never an
// event behind a dead or backing-off one.
func TestClaimPassesTenThousandBlockedAggregates(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("10 000 orders: skipped with -short and under -race (the plain run covers it)")
	}
	const n, free = 10000, 150
	ctx := context.Background()
	f := newFixture(t)
	q := &eventsQueue{Queue: f.queue}
	r := f.relay(t, "r1", func(c *Config) {
		c.Queue, c.Log = q, slog.New(slog.NewTextHandler(io.Discard, nil))
		c.URLs = map[string]string{outbox.DestOrderEvents: "events"}
	})
	addOrders(t, f, "held", n)
	redriven := holdBack(t, f, "held", n)
	f.clock.Advance(2 * time.Second)
	addOrders(t, f, "free", free)
	f.clock.Advance(time.Second)

	var round Report
	claimed, err := r.RunOnce(ctx, &round)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one claim round with %d orders held back: %+v", n, round)
	if claimed != r.cfg.BatchSize {
		t.Errorf("one claim round claimed %d rows, want a full batch of %d", claimed, r.cfg.BatchSize)
	}
	rep, err := r.Run(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the run after it: %+v", rep)
	sent := q.sentIDs()
	checkOnceInOrder(t, sent, "free", free)
	got := map[string]bool{}
	for _, id := range sent {
		got[id] = true
	}
	for i := range n {
		c, l := fmt.Sprintf("held-c-%05d", i), fmt.Sprintf("held-f-%05d", i)
		if redriven[c] != got[c] || redriven[c] != got[l] {
			t.Fatalf("order %d (redriven %v): created sent %v, confirmed sent %v", i, redriven[c], got[c], got[l])
		}
	}
}

// An events-queue outage with nothing dead: every order.created backs off
// while its order.confirmed waits behind it, far more of them than a claim
// holds; once the queue is back and the backoffs have passed, one run
// publishes every event once, in order per order.
func TestEventsOutageWithNothingDeadLeavesNothingStuck(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	f := newFixture(t)
	q := &eventsQueue{Queue: f.queue, down: true, refuse: outbox.TypeOrderCreated}
	r := f.relay(t, "r1", func(c *Config) {
		c.Queue, c.Log, c.MaxAttempts = q, slog.New(slog.NewTextHandler(io.Discard, nil)), 1000
		c.URLs = map[string]string{outbox.DestOrderEvents: "events"}
	})
	addOrders(t, f, "o", n)
	for range 30 { // 30 s of outage, the relay running every second
		if _, err := r.Run(ctx, time.Hour); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Second)
	}
	q.mu.Lock()
	q.down = false
	q.mu.Unlock()
	f.clock.Advance(DefaultBackoffCap)
	rep, err := r.Run(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the run after the outage: %+v", rep)
	checkOnceInOrder(t, q.sentIDs(), "o", n)
}
