package redrive

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// consumer simulates the saga advancer: it deduplicates by event id in the
// inbox table and, while broken, fails without deleting the message.
type consumer struct {
	f         *fixture
	broken    bool
	processed map[string]int
}

// poll receives once; it returns how many messages it got.
func (c *consumer) poll(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	msgs, err := c.f.queue.Receive(ctx, c.f.srcURL, queue.ReceiveOptions{Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if c.broken {
			continue // the handler fails: no delete, the message comes back after its visibility timeout
		}
		eventID := m.Attributes[outbox.AttrEventID]
		now := c.f.clock.Now()
		err := c.f.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertInbox(ctx, "test-consumer", eventID, now, now.Add(24*time.Hour))
		})
		switch {
		case err == nil:
			c.processed[eventID]++
		case !apperr.Is(err, apperr.Conflict):
			t.Fatal(err)
		}
		if err := c.f.queue.Delete(ctx, c.f.srcURL, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	return len(msgs)
}

// kill lets a broken consumer fail the queued message until the queue moves
// it to the dead-letter queue.
func (c *consumer) kill(t *testing.T) {
	t.Helper()
	c.broken = true
	for i := 1; i <= maxReceives; i++ {
		if n := c.poll(t); n != 1 {
			t.Fatalf("delivery %d: got %d messages, want 1", i, n)
		}
		c.f.clock.Advance(visibility + time.Second)
	}
	if n := c.poll(t); n != 0 {
		t.Fatalf("delivery %d: got %d messages, want the message moved to the DLQ", maxReceives+1, n)
	}
}

func (f *fixture) sendPoison(t *testing.T) {
	t.Helper()
	_, err := f.queue.SendBatch(context.Background(), f.srcURL, []queue.OutMessage{{ID: "p", Body: `{"saga_id":"s-1","step":1}`,
		Attributes: map[string]string{outbox.AttrEventID: "ev-1", outbox.AttrOrderID: "o-1", outbox.AttrSagaID: "s-1",
			outbox.AttrIdempotencyKey: "key-1", outbox.AttrEventType: outbox.TypeSagaAdvance}}})
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) depth(t *testing.T, url string) int {
	t.Helper()
	v, inflight, err := f.queue.Depth(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return v + inflight
}

func (f *fixture) mustIngest(t *testing.T, want int) {
	t.Helper()
	n, err := f.svc.Ingest(context.Background(), 10)
	if err != nil || n != want {
		t.Fatalf("Ingest = %d, %v; want %d", n, err, want)
	}
}

func TestPoisonMessageIsIngestedRedrivenAndProcessedOnce(t *testing.T) {
	f := newFixture(t)
	c := &consumer{f: f, processed: map[string]int{}}
	f.sendPoison(t)
	c.kill(t)
	if got := f.depth(t, f.dlqURL); got != 1 {
		t.Fatalf("DLQ depth = %d, want 1", got)
	}

	f.mustIngest(t, 1)
	if got := f.depth(t, f.dlqURL); got != 0 {
		t.Fatalf("DLQ depth after ingest = %d, want 0", got)
	}
	entries := f.all(t)
	if len(entries) != 1 {
		t.Fatalf("%d dead letters, want 1", len(entries))
	}
	d := entries[0]
	if d.Source != dlq.SourceQueue || d.Queue != srcName || d.Status != dlq.StatusOpen || d.OrderID != "o-1" ||
		d.SagaID != "s-1" || d.IdempotencyKey != "key-1" || d.OutboxEventID != "ev-1" || d.ErrorType != ErrorTypeMaxReceives ||
		string(d.Payload) != `{"saga_id":"s-1","step":1}` || d.Attrs[outbox.AttrEventType] != outbox.TypeSagaAdvance {
		t.Fatalf("ingested entry = %+v", d)
	}

	c.broken = false // the cause is fixed
	rep := f.mustRedrive(t, Selection{IDs: []string{d.ID}})
	if rep.Redriven != 1 {
		t.Fatalf("report = %+v", rep)
	}
	msgs, err := f.queue.Receive(context.Background(), f.srcURL, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Second})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("source queue: %d messages, %v", len(msgs), err)
	}
	if m := msgs[0]; m.Attributes[AttrRedriveOf] != d.ID || m.Attributes[AttrRedriveCount] != "1" ||
		m.Attributes[outbox.AttrEventID] != "ev-1" || m.Body != string(d.Payload) {
		t.Fatalf("redriven message = %+v", m)
	}
	f.clock.Advance(2 * time.Second)

	// The redriven message is processed; a duplicate delivery is dropped by the inbox.
	c.poll(t)
	f.sendPoison(t)
	c.poll(t)
	if c.processed["ev-1"] != 1 || f.count(t, "inbox") != 1 {
		t.Fatalf("processed %d times (inbox rows %d), want exactly once", c.processed["ev-1"], f.count(t, "inbox"))
	}
	if got := f.get(t, d.ID); got.Status != dlq.StatusRedriven || got.RedriveCount != 1 || got.ResolvedBy != "ops@example" {
		t.Fatalf("entry after redrive = %+v", got)
	}
	// A second redrive of the same entry does nothing.
	if rep := f.mustRedrive(t, Selection{IDs: []string{d.ID}}); rep.Skipped != 1 || rep.Redriven != 0 {
		t.Fatalf("second redrive = %+v", rep)
	}
	if f.depth(t, f.srcURL) != 0 {
		t.Fatal("second redrive sent a message")
	}
}

func TestLoopGuardFlagsAndStopsAMessageThatKeepsFailing(t *testing.T) {
	f := newFixture(t) // LoopLimit 2
	c := &consumer{f: f, processed: map[string]int{}}
	f.sendPoison(t)
	c.kill(t)
	f.mustIngest(t, 1)
	id := f.all(t)[0].ID
	byFilter := Selection{Filter: dlq.Filter{Source: dlq.SourceQueue, ErrorType: ErrorTypeMaxReceives}}

	for round := 1; round <= 2; round++ {
		if rep := f.mustRedrive(t, byFilter); rep.Redriven != 1 {
			t.Fatalf("round %d: report %+v", round, rep)
		}
		c.kill(t) // still broken: it dies again
		f.mustIngest(t, 1)
		all := f.all(t)
		if len(all) != 1 || all[0].ID != id {
			t.Fatalf("round %d: %d entries (first %s), want the one entry %s", round, len(all), all[0].ID, id)
		}
		d := all[0]
		if d.Status != dlq.StatusOpen || d.RedriveCount != round || len(d.History) != round+1 || d.Flagged != (round == 2) {
			t.Fatalf("round %d: entry = status %s, redrives %d, history %d, flagged %v", round, d.Status, d.RedriveCount, len(d.History), d.Flagged)
		}
	}
	// Flagged: a filter no longer selects it, nor does an id without force.
	if rep := f.mustRedrive(t, byFilter); rep.Selected != 0 || rep.Redriven != 0 {
		t.Fatalf("filter redrive of a flagged entry: %+v", rep)
	}
	if rep := f.mustRedrive(t, Selection{IDs: []string{id}}); rep.Skipped != 1 {
		t.Fatalf("id redrive without force: %+v", rep)
	}
	if f.depth(t, f.srcURL) != 0 {
		t.Fatal("a flagged entry was sent")
	}
	// An operator who fixed the cause may force it.
	if rep := f.mustRedrive(t, Selection{IDs: []string{id}, Force: true}); rep.Redriven != 1 {
		t.Fatalf("forced redrive: %+v", rep)
	}
	if f.depth(t, f.srcURL) != 1 {
		t.Fatal("the forced redrive sent nothing")
	}
}

// failingDelete makes the next Delete fail, as a crash between recording a
// dead letter and deleting its message would.
type failingDelete struct {
	queue.Queue
	fail int
}

func (q *failingDelete) Delete(ctx context.Context, url, handle string) error {
	if q.fail > 0 {
		q.fail--
		return apperr.New(apperr.Transient, "injected crash")
	}
	return q.Queue.Delete(ctx, url, handle)
}

func TestIngestAfterACrashRecordsOnce(t *testing.T) {
	f := newFixture(t)
	c := &consumer{f: f, processed: map[string]int{}}
	f.sendPoison(t)
	c.kill(t)
	broken := f.service(t, func(c *Config) { c.Queue = &failingDelete{Queue: f.queue, fail: 1} })
	if _, err := broken.Ingest(context.Background(), 10); err == nil {
		t.Fatal("Ingest with a failing delete succeeded")
	}
	first := f.all(t)
	if len(first) != 1 || f.depth(t, f.dlqURL) != 1 {
		t.Fatalf("after the crash: %d entries, DLQ depth %d", len(first), f.depth(t, f.dlqURL))
	}
	f.clock.Advance(ingestVisibility + time.Second)
	f.mustIngest(t, 1)
	after := f.all(t)
	if len(after) != 1 || after[0].Version != first[0].Version || len(after[0].History) != 1 || f.depth(t, f.dlqURL) != 0 {
		t.Fatalf("re-ingest changed the entry: %+v", after)
	}
}

func TestIngestDropsAnOlderGenerationOfARedrivenEntry(t *testing.T) {
	f := newFixture(t)
	c := &consumer{f: f, processed: map[string]int{}}
	f.sendPoison(t)
	c.kill(t)
	broken := f.service(t, func(c *Config) { c.Queue = &failingDelete{Queue: f.queue, fail: 1} })
	_, _ = broken.Ingest(context.Background(), 10) // recorded, still in the DLQ
	id := f.all(t)[0].ID
	f.mustRedrive(t, Selection{IDs: []string{id}})
	f.clock.Advance(ingestVisibility + time.Second)
	f.mustIngest(t, 1) // the stale copy leaves the DLQ
	if d := f.get(t, id); d.Status != dlq.StatusRedriven || len(d.History) != 1 {
		t.Fatalf("a stale copy reopened the entry: %+v", d)
	}
}
