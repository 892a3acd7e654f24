package relay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
)

// meteredQueue counts the SendBatch calls in flight. The first `meet` calls
// wait for each other (a barrier): they return only once `meet` calls are
// in flight together, so a send that does not run `meet` calls at once
// fails the test (after a generous deadline) instead of passing. Every call
// then goes to the real queue, or fails as fail says.
type meteredQueue struct {
	queue.Queue
	meet int
	// fail, if set, decides a call's outcome from its entry ids: a whole-call
	// error, per-entry errors, or entries to leave without a result.
	fail func(ids []string) (callErr error, entryErr map[string]error, drop map[string]bool)

	mu       sync.Mutex
	inflight int
	max      int
	arrived  int
	met      chan struct{}
	calls    [][]string // entry ids of each call, in the order the calls began
}

func newMeteredQueue(q queue.Queue, meet int) *meteredQueue {
	return &meteredQueue{Queue: q, meet: meet, met: make(chan struct{})}
}

func (q *meteredQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	q.mu.Lock()
	q.inflight++
	q.max = max(q.max, q.inflight)
	q.arrived++
	waits := q.arrived <= q.meet
	if q.arrived == q.meet {
		close(q.met)
	}
	q.calls = append(q.calls, ids)
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.inflight--
		q.mu.Unlock()
	}()
	if waits {
		select {
		case <-q.met:
		case <-time.After(20 * time.Second):
			return nil, apperr.New(apperr.Transient, "only %d calls ever in flight together, want %d", q.max, q.meet)
		}
	}
	var callErr error
	var entryErr map[string]error
	var drop map[string]bool
	if q.fail != nil {
		callErr, entryErr, drop = q.fail(ids)
	}
	if callErr != nil {
		return nil, callErr
	}
	var pass []queue.OutMessage
	var out []queue.SendResult
	for _, m := range msgs {
		switch {
		case drop[m.ID]:
		case entryErr[m.ID] != nil:
			out = append(out, queue.SendResult{ID: m.ID, Err: entryErr[m.ID]})
		default:
			pass = append(pass, m)
		}
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

// The chunks of one round go out SendConcurrency at a time: all of them in
// flight together, never more.
func TestSendRunsChunksConcurrentlyUpToTheBound(t *testing.T) {
	for _, limit := range []int{2, 4} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			f := newFixture(t)
			ids := f.addEvents(t, 80, "") // 8 chunks of ten
			q := newMeteredQueue(f.queue, limit)
			rep, err := f.relay(t, "r", func(c *Config) { c.Queue, c.BatchSize, c.SendConcurrency = q, 100, limit }).
				Run(context.Background(), time.Minute)
			if err != nil || rep.Published != 80 {
				t.Fatalf("report %+v, %v", rep, err)
			}
			if q.max != limit || len(q.calls) != 8 {
				t.Errorf("%d calls, at most %d in flight; want 8 calls, %d in flight", len(q.calls), q.max, limit)
			}
			counts, _ := f.drain(t)
			for _, id := range ids {
				if counts[id] != 1 {
					t.Errorf("event %s delivered %d times", id, counts[id])
				}
			}
		})
	}
}

// Rows of one aggregate in several chunks (a fast-path dispatch can hold
// them; a claim never does) go one call after another, in order.
func TestSendKeepsAnAggregateInOrderAcrossChunks(t *testing.T) {
	f := newFixture(t)
	q := newMeteredQueue(f.queue, 0)
	r := f.relay(t, "r", func(c *Config) { c.Queue, c.SendConcurrency = q, 8 })
	var evs []outbox.Event
	var want []string
	for i := 0; i < 25; i++ {
		id := fmt.Sprintf("e%02d", i)
		agg := fmt.Sprintf("solo-%d", i)
		if i%7 == 0 {
			agg = "shared" // rows 0, 7, 14, 21: chunks 0, 0, 1, 2
		}
		evs = append(evs, testEvent(id, agg, outbox.DestSagaCommands))
		want = append(want, id)
	}
	out := r.send(context.Background(), evs)
	if q.max != 1 || len(q.calls) != 3 {
		t.Errorf("%d calls, %d in flight at most; want 3 calls one at a time", len(q.calls), q.max)
	}
	if got := slices.Concat(q.calls...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	for i, o := range out {
		if o.err != nil || o.event.ID != want[i] {
			t.Errorf("outcome %d: %s %v, want %s sent", i, o.event.ID, o.err, want[i])
		}
	}
	_, order := f.drain(t)
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("queue order %v, want %v", order, want)
	}
}

// Under concurrency every event still gets exactly its own outcome, in the
// same order as a sequential send: grouped by destination in order of
// first appearance, input order within one.
func TestConcurrentSendGivesEachEntryItsOwnOutcome(t *testing.T) {
	f := newFixture(t)
	eventsURL, err := f.queue.Ensure(context.Background(), queue.QueueSpec{Name: "order-events", VisibilityTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var evs []outbox.Event
	for i := 0; i < 47; i++ {
		dest := outbox.DestSagaCommands
		if i%3 == 0 {
			dest = outbox.DestOrderEvents
		}
		if i == 46 {
			dest = "nowhere" // no URL configured
		}
		evs = append(evs, testEvent(fmt.Sprintf("e%02d", i), fmt.Sprintf("agg-%d", i), dest))
	}
	whole := apperr.New(apperr.Transient, "whole call refused (injected)")
	entry := apperr.New(apperr.Invalid, "entry refused (injected)")
	fail := func(ids []string) (error, map[string]error, map[string]bool) {
		if slices.Contains(ids, "e05") {
			return whole, nil, nil
		}
		return nil, map[string]error{"e10": entry, "e30": entry}, map[string]bool{"e20": true}
	}
	run := func(concurrency int) ([]outcome, *meteredQueue) {
		q := newMeteredQueue(f.queue, 0)
		q.fail = fail
		r := f.relay(t, "r", func(c *Config) {
			c.Queue, c.SendConcurrency = q, concurrency
			c.URLs = map[string]string{outbox.DestSagaCommands: f.url, outbox.DestOrderEvents: eventsURL}
		})
		return r.send(context.Background(), evs), q
	}
	seq, _ := run(1)
	conc, q := run(4)
	if len(q.calls) != 5 { // 30 saga commands in 3 calls, 16 order events in 2
		t.Errorf("%d calls, want 5", len(q.calls))
	}
	var wantOrder []string
	for _, dest := range []string{outbox.DestOrderEvents, outbox.DestSagaCommands, "nowhere"} {
		for _, e := range evs {
			if e.Destination == dest {
				wantOrder = append(wantOrder, e.ID)
			}
		}
	}
	if len(conc) != len(evs) || len(seq) != len(evs) {
		t.Fatalf("%d and %d outcomes for %d events", len(conc), len(seq), len(evs))
	}
	// The chunk holding e05: saga commands e01 e02 e04 e05 ... the first ten.
	wholeChunk := map[string]bool{}
	var saga []string
	for _, e := range evs {
		if e.Destination == outbox.DestSagaCommands {
			saga = append(saga, e.ID)
		}
	}
	for _, id := range saga[:10] {
		wholeChunk[id] = true
	}
	for i, o := range conc {
		if o.event.ID != wantOrder[i] || seq[i].event.ID != wantOrder[i] {
			t.Fatalf("outcome %d is %s (sequential %s), want %s", i, o.event.ID, seq[i].event.ID, wantOrder[i])
		}
		id := o.event.ID
		var want string
		switch {
		case id == "e46":
			want = `no queue is configured for destination "nowhere"`
		case wholeChunk[id]:
			want = whole.Error()
		case id == "e10" || id == "e30":
			want = entry.Error()
		case id == "e20":
			want = "queue returned no result for entry e20"
		}
		if want == "" && o.err != nil || want != "" && (o.err == nil || !strings.Contains(o.err.Error(), want)) {
			t.Errorf("%s: outcome %v, want %q", id, o.err, want)
		}
		if fmt.Sprint(seq[i].err) != fmt.Sprint(o.err) {
			t.Errorf("%s: sequential outcome %v, concurrent %v", id, seq[i].err, o.err)
		}
	}
}

func testEvent(id, agg, dest string) outbox.Event {
	return outbox.Event{ID: id, AggregateType: "saga", AggregateID: agg, EventType: outbox.TypeSagaAdvance,
		Destination: dest, Payload: []byte(`{"id":"` + id + `"}`), Metadata: map[string]string{outbox.AttrOrderID: "o-" + id},
		Status: outbox.StatusPending, Version: 2}
}
