package relay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/kit/resilience"
)

// clock is the shared settable test clock.
type clock = fakeclock.Clock

type fixture struct {
	store store.Store
	queue *sqlitequeue.Queue
	url   string
	clock *clock
	ids   atomic.Int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay.db")
	clk := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Config{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.Open(path, sqlitequeue.Config{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = s.Close() })
	url, err := q.Ensure(context.Background(), queue.QueueSpec{Name: "saga-commands", VisibilityTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: s, queue: q, url: url, clock: clk}
}

func (f *fixture) newID() string { return fmt.Sprintf("id-%06d", f.ids.Add(1)) }

// relay builds the fixture's relay; each change adjusts its Config first.
func (f *fixture) relay(t *testing.T, owner string, changes ...func(*Config)) *Relay {
	t.Helper()
	cfg := Config{
		Store: f.store, Queue: f.queue, URLs: map[string]string{outbox.DestSagaCommands: f.url},
		Owner: owner, BatchSize: 25, MaxAttempts: 4, Lease: 30 * time.Second,
		Backoff: resilience.Backoff{Base: time.Second, Cap: time.Minute, Rand: resilience.NewRand(7)},
		Now:     f.clock.Now, NewID: f.newID,
	}
	for _, c := range changes {
		c(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// addEvents commits n outbox rows, each on its own aggregate unless agg is set.
func (f *fixture) addEvents(t *testing.T, n int, agg string) []string {
	t.Helper()
	var ids []string
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		ids = ids[:0]
		for i := 0; i < n; i++ {
			id := f.newID()
			a := agg
			if a == "" {
				a = "agg-" + id
			}
			e := outbox.Event{ID: id, AggregateType: "saga", AggregateID: a, EventType: outbox.TypeSagaAdvance,
				Destination: outbox.DestSagaCommands, Payload: []byte(`{"n":` + fmt.Sprint(i) + `}`),
				Metadata: map[string]string{outbox.AttrOrderID: "o-" + id}, Status: outbox.StatusPending,
				NextAttemptAt: f.clock.Now(), CreatedAt: f.clock.Now().Add(time.Duration(i) * time.Microsecond), Version: 1}
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// drain receives every visible message and counts them by event id.
func (f *fixture) drain(t *testing.T) (map[string]int, []string) {
	t.Helper()
	counts := map[string]int{}
	var order []string
	for {
		msgs, err := f.queue.Receive(context.Background(), f.url, queue.ReceiveOptions{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return counts, order
		}
		for _, m := range msgs {
			id := m.Attributes[outbox.AttrEventID]
			counts[id]++
			order = append(order, id)
			if err := f.queue.Delete(context.Background(), f.url, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (f *fixture) event(t *testing.T, id string) outbox.Event {
	t.Helper()
	return getOutbox(t, f.store, id)
}

// getOutbox reads one outbox row of st.
func getOutbox(t *testing.T, st store.Store, id string) outbox.Event {
	t.Helper()
	var e outbox.Event
	err := st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		e, err = tx.GetOutbox(ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRelayPublishesEveryRowWithAttributes(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 57, "")
	rep, err := f.relay(t, "r1").Run(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Published != 57 || rep.Pending != 0 || rep.Stopped != "drained" {
		t.Fatalf("report %+v", rep)
	}
	counts, _ := f.drain(t)
	for _, id := range ids {
		if counts[id] != 1 {
			t.Errorf("event %s delivered %d times", id, counts[id])
		}
		if e := f.event(t, id); e.Status != outbox.StatusPublished || e.PublishedAt.IsZero() || e.LeaseOwner != "" {
			t.Errorf("row %s: %+v", id, e)
		}
	}
}

// crashAfterSend is the queue of a process that dies each time the queue
// accepted a batch, before the relay hears back.
type crashAfterSend struct{ queue.Queue }

func (q crashAfterSend) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	res, err := q.Queue.SendBatch(ctx, url, msgs)
	if err != nil {
		return res, err
	}
	return res, fmt.Errorf("%w: process killed", ErrCrash)
}

func TestCrashAfterSendBeforeMarkResends(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 5, "")
	r := f.relay(t, "crashy", func(c *Config) {
		c.Queue = crashAfterSend{c.Queue}
	})
	if _, err := r.Run(context.Background(), time.Minute); !errors.Is(err, ErrCrash) {
		t.Fatalf("got %v, want the simulated crash", err)
	}
	// Rows are still pending and leased: nobody else sends them yet.
	if rep, _ := f.relay(t, "other").Run(context.Background(), time.Minute); rep.Claimed != 0 {
		t.Fatalf("a live lease was ignored: %+v", rep)
	}
	f.clock.Advance(31 * time.Second) // the lease lapses
	rep, err := f.relay(t, "other").Run(context.Background(), time.Minute)
	if err != nil || rep.Published != 5 {
		t.Fatalf("rerun: %+v %v", rep, err)
	}
	counts, _ := f.drain(t)
	for _, id := range ids {
		if counts[id] != 2 {
			t.Errorf("event %s delivered %d times, want 2 (once before the crash, once after)", id, counts[id])
		}
	}
}

func TestTwoRelaysAtOncePublishEachRowOnce(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 300, "")
	var wg sync.WaitGroup
	var published atomic.Int64
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rep, err := f.relay(t, fmt.Sprintf("r%d", i)).Run(context.Background(), time.Minute)
			if err != nil {
				t.Error(err)
			}
			published.Add(int64(rep.Published))
		}(i)
	}
	wg.Wait()
	if published.Load() != 300 {
		t.Errorf("published %d, want 300", published.Load())
	}
	counts, _ := f.drain(t)
	for _, id := range ids {
		if counts[id] != 1 {
			t.Errorf("event %s delivered %d times, want exactly 1 without crashes", id, counts[id])
		}
	}
}

func TestRowsOfOneAggregateGoInOrder(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 12, "one-aggregate")
	r := f.relay(t, "r")
	for i := 0; i < 20; i++ {
		if _, err := r.Run(context.Background(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	_, order := f.drain(t)
	if fmt.Sprint(order) != fmt.Sprint(ids) {
		t.Fatalf("order %v, want %v", order, ids)
	}
}

// flakyQueue fails every send with a transient error until ok is set.
type flakyQueue struct {
	queue.Queue
	fails atomic.Int64
}

func (q *flakyQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	q.fails.Add(1)
	return nil, apperr.New(apperr.Transient, "queue unavailable (injected)")
}

func TestFailingQueueBacksOffThenDeadLetters(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 1, "")
	q := &flakyQueue{Queue: f.queue}
	var backoff resilience.Backoff
	r := f.relay(t, "r", func(c *Config) { c.Queue, backoff = q, c.Backoff })
	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		rep, err := r.Run(context.Background(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		e := f.event(t, ids[0])
		if e.Attempts != attempt || e.LastError == "" {
			t.Fatalf("attempt %d: row %+v", attempt, e)
		}
		if attempt < 4 {
			d := e.NextAttemptAt.Sub(f.clock.Now())
			ceil := backoff.Ceiling(attempt - 1)
			if d < 0 || d >= ceil {
				t.Errorf("attempt %d: backoff %v outside full-jitter window [0, %v)", attempt, d, ceil)
			}
			delays = append(delays, d)
			if rep.Failed != 1 || e.Status != outbox.StatusPending {
				t.Fatalf("attempt %d: %+v %+v", attempt, rep, e)
			}
			// Not due yet: a relay run now claims nothing.
			if d > 0 {
				if rep2, _ := r.Run(context.Background(), time.Minute); rep2.Claimed != 0 {
					t.Fatalf("claimed a row before its backoff elapsed")
				}
			}
			f.clock.Advance(d)
		} else if e.Status != outbox.StatusDead || rep.Dead != 1 {
			t.Fatalf("after max attempts: %+v %+v", rep, e)
		}
	}
	var dls []dlq.DeadLetter
	err := f.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		dls, _, err = tx.ListDeadLetters(ctx, dlq.Filter{Source: dlq.SourceOutbox}, dlq.Page{Limit: 10})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || dls[0].OutboxEventID != ids[0] || dls[0].ErrorType != "transient" ||
		dls[0].RetryCount != 4 || dls[0].Error == "" || dls[0].OrderID != "o-"+ids[0] {
		t.Fatalf("dead letters %+v", dls)
	}
	if q.fails.Load() != 4 {
		t.Errorf("sends attempted %d, want 4", q.fails.Load())
	}
	t.Logf("jittered delays: %v", delays)
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	b := resilience.Backoff{Base: time.Second, Cap: time.Minute, Rand: resilience.NewRand(1)}
	for n := 0; n < 8; n++ {
		var maxSeen time.Duration
		distinct := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d := b.Delay(n)
			if d < 0 || d >= b.Ceiling(n) {
				t.Fatalf("n=%d: %v outside [0,%v)", n, d, b.Ceiling(n))
			}
			distinct[d] = true
			maxSeen = max(maxSeen, d)
		}
		if maxSeen < b.Ceiling(n)/2 || len(distinct) < 100 {
			t.Errorf("n=%d: no real jitter (max %v of %v, %d distinct)", n, maxSeen, b.Ceiling(n), len(distinct))
		}
	}
}

func TestDispatchFastPathMarksPublished(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 3, "")
	var evs []outbox.Event
	for _, id := range ids {
		evs = append(evs, f.event(t, id))
	}
	f.relay(t, "api").Dispatch(context.Background(), evs)
	for _, id := range ids {
		if e := f.event(t, id); e.Status != outbox.StatusPublished {
			t.Errorf("row %s not published by the fast path", id)
		}
	}
	counts, _ := f.drain(t)
	if len(counts) != 3 {
		t.Errorf("delivered %v", counts)
	}
	// The relay finds nothing left to do.
	if rep, _ := f.relay(t, "r").Run(context.Background(), time.Minute); rep.Claimed != 0 {
		t.Errorf("relay re-sent fast-path rows: %+v", rep)
	}
}

func TestMissingDestinationIsAFailureNotALoss(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 1, "")
	r := f.relay(t, "r", func(c *Config) { c.URLs = map[string]string{} })
	if _, err := r.Run(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if e := f.event(t, ids[0]); e.Status != outbox.StatusPending || e.Attempts != 1 {
		t.Fatalf("row %+v", e)
	}
}

// failFirst fails the first send of one event id.
type failFirst struct {
	queue.Queue
	id     string
	failed atomic.Bool
}

func (q *failFirst) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	var pass []queue.OutMessage
	var out []queue.SendResult
	for _, m := range msgs {
		if m.ID == q.id && q.failed.CompareAndSwap(false, true) {
			out = append(out, queue.SendResult{ID: m.ID, Err: apperr.New(apperr.Transient, "injected failure")})
			continue
		}
		pass = append(pass, m)
	}
	if len(pass) == 0 {
		return out, nil
	}
	res, err := q.Queue.SendBatch(ctx, url, pass)
	return append(out, res...), err
}

func TestAFailedRowHoldsBackLaterRowsOfItsAggregate(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 6, "agg-x")
	others := f.addEvents(t, 3, "")
	r := f.relay(t, "r", func(c *Config) { c.Queue = &failFirst{Queue: f.queue, id: ids[0]} })
	if _, err := r.Run(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	counts, _ := f.drain(t)
	for _, id := range ids {
		if counts[id] != 0 {
			t.Fatalf("row %s of agg-x overtook its failed predecessor", id)
		}
	}
	for _, id := range others {
		if counts[id] != 1 {
			t.Errorf("unrelated row %s delivered %d times", id, counts[id])
		}
	}
	f.clock.Advance(time.Hour)
	for i := 0; i < 10; i++ {
		if _, err := r.Run(context.Background(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	_, order := f.drain(t)
	if fmt.Sprint(order) != fmt.Sprint(ids) {
		t.Fatalf("order %v, want %v", order, ids)
	}
}

// A row behind its aggregate's leased head is not a claim candidate: the
// claim does not see it (Blocked counts only rows the claim saw and had to
// pass over), and it stays pending.
func TestRowBehindALeasedRowIsNotClaimed(t *testing.T) {
	f := newFixture(t)
	ids := f.addEvents(t, 2, "agg-blocked")
	// Another relay holds the first row.
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		e, err := tx.GetOutbox(ctx, ids[0])
		if err != nil {
			return err
		}
		prev := e.Version
		e.LeaseOwner, e.LeaseUntil, e.Version = "other", f.clock.Now().Add(time.Minute), prev+1
		return tx.UpdateOutbox(ctx, e, prev)
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.relay(t, "r").Run(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Claimed != 0 || rep.Stopped != "drained" || rep.Blocked != 0 || rep.Pending != 2 {
		t.Fatalf("report %+v, want nothing claimed, nothing seen blocked, 2 pending", rep)
	}
}

func TestRelayDrainsEveryShard(t *testing.T) {
	f := newFixture(t)
	var ids []string
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for shard := 0; shard < 4; shard++ {
			id := f.newID()
			ids = append(ids, id)
			if err := tx.InsertOutbox(ctx, outbox.Event{ID: id, Shard: shard, AggregateType: "saga", AggregateID: "agg-" + id,
				EventType: outbox.TypeSagaAdvance, Destination: outbox.DestSagaCommands, Payload: []byte(`{}`),
				Status: outbox.StatusPending, NextAttemptAt: f.clock.Now(), CreatedAt: f.clock.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.relay(t, "r", func(c *Config) { c.Shards = 4 })
	rep, err := r.Run(context.Background(), time.Minute)
	if err != nil || rep.Published != 4 || rep.Pending != 0 {
		t.Fatalf("report %+v, %v: every shard must be drained", rep, err)
	}
}

// Rows queued behind a blocked aggregate must not hide claimable rows: with
// a batch of 5 and 8 blocked rows in front, the claim still finds the others.
func TestBlockedRowsDoNotHideClaimableOnes(t *testing.T) {
	f := newFixture(t)
	blockedIDs := f.addEvents(t, 9, "agg-stuck")
	f.clock.Advance(time.Second) // the free rows come after every blocked one
	free := f.addEvents(t, 3, "")
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		e, err := tx.GetOutbox(ctx, blockedIDs[0])
		if err != nil {
			return err
		}
		prev := e.Version
		e.LeaseOwner, e.LeaseUntil, e.Version = "other", f.clock.Now().Add(time.Hour), prev+1
		return tx.UpdateOutbox(ctx, e, prev)
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.relay(t, "r", func(c *Config) { c.BatchSize = 5 })
	rep, err := r.Run(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	counts, _ := f.drain(t)
	for _, id := range free {
		if counts[id] != 1 {
			t.Errorf("claimable row %s was hidden behind the blocked aggregate (report %+v)", id, rep)
		}
	}
	// The 8 rows behind the leased one never reach the claim.
	if rep.Stopped != "drained" || rep.Blocked != 0 || rep.Pending != 9 {
		t.Errorf("report %+v, want drained, none seen blocked, 9 pending", rep)
	}
}

// crashOnce is a queue whose first accepted batch is the last thing the
// process does; later batches are accepted as usual.
type crashOnce struct {
	queue.Queue
	crashed *atomic.Bool
}

func (q crashOnce) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	res, err := q.Queue.SendBatch(ctx, url, msgs)
	if err != nil || !q.crashed.CompareAndSwap(false, true) {
		return res, err
	}
	return res, fmt.Errorf("%w: process killed", ErrCrash)
}

// A crash in the fast path after the queue accepted one of a dispatch's
// batches marks no row of the dispatch, not even those of the batches the
// queue accepted before or after: the process is dead. The relay sends
// every row again.
func TestDispatchCrashAfterSendMarksNothing(t *testing.T) {
	f := newFixture(t)
	var evs []outbox.Event
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		evs = evs[:0]
		for i := 0; i < 15; i++ { // two batches
			id := f.newID()
			e := outbox.Event{ID: id, AggregateType: "saga", AggregateID: "agg-" + id, EventType: outbox.TypeSagaAdvance,
				Destination: outbox.DestSagaCommands, Payload: []byte(`{}`), Metadata: map[string]string{},
				Status: outbox.StatusPending, NextAttemptAt: f.clock.Now(), CreatedAt: f.clock.Now(), Version: 1}
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
			evs = append(evs, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var crashed atomic.Bool
	f.relay(t, "fast", func(c *Config) { c.Queue = crashOnce{Queue: c.Queue, crashed: &crashed} }).
		Dispatch(context.Background(), evs)
	if !crashed.Load() {
		t.Fatal("the dispatch never reached the queue")
	}
	rep, err := f.relay(t, "other").Run(context.Background(), time.Minute)
	if err != nil || rep.Published != len(evs) {
		t.Fatalf("relay after the crash: %+v %v; want all %d rows published", rep, err, len(evs))
	}
	counts, _ := f.drain(t)
	for _, e := range evs {
		if counts[e.ID] != 2 {
			t.Errorf("event %s delivered %d times, want 2 (once before the crash, once after)", e.ID, counts[e.ID])
		}
	}
}
