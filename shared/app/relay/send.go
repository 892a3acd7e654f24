package relay

import (
	"context"
	"sync"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// send publishes events grouped by destination, ten per call, and returns
// one outcome per event, grouped by destination in order of first
// appearance and in input order within a destination (the same order
// whatever the concurrency). It never returns early: every event gets an
// outcome.
//
// Up to SendConcurrency calls are in flight at once: a queue call is a
// network round trip (10-30 ms to Message Queue), so a sequential relay is
// bound by latency, not by the queue. Concurrent chunks cannot reorder an
// aggregate when no aggregate has rows in two chunks, which holds for the
// relay's claims (at most one row per aggregate); when it does not hold (a
// fast-path dispatch of several rows of one aggregate), the chunks go one
// after another, in order.
func (r *Relay) send(ctx context.Context, events []outbox.Event) []outcome {
	out := make([]outcome, 0, len(events))
	byDest := map[string][]outbox.Event{}
	var order []string
	for _, e := range events {
		if _, ok := byDest[e.Destination]; !ok {
			order = append(order, e.Destination)
		}
		byDest[e.Destination] = append(byDest[e.Destination], e)
	}
	var chunks []chunk
	for _, dest := range order {
		evs := byDest[dest]
		url := r.cfg.URLs[dest]
		if url == "" {
			err := apperr.New(apperr.Internal, "no queue is configured for destination %q", dest)
			for _, e := range evs {
				out = append(out, outcome{event: e, err: err})
			}
			continue
		}
		for start := 0; start < len(evs); start += queue.MaxBatch {
			end := min(start+queue.MaxBatch, len(evs))
			n := len(out)
			out = out[:n+end-start]
			chunks = append(chunks, chunk{url: url, evs: evs[start:end], out: out[n:]})
		}
	}
	workers := min(r.cfg.SendConcurrency, len(chunks))
	if workers <= 1 || sharesAggregate(chunks) {
		for _, c := range chunks {
			r.sendChunk(ctx, c)
		}
		return out
	}
	next := make(chan chunk)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				r.sendChunk(ctx, c)
			}
		}()
	}
	for _, c := range chunks {
		next <- c
	}
	close(next)
	wg.Wait()
	return out
}

// chunk is one SendBatch call of send: up to ten rows to one queue, and the
// slots of send's result that receive their outcomes (out[i] is evs[i]'s).
type chunk struct {
	url string
	evs []outbox.Event
	out []outcome
}

// sharesAggregate reports whether some aggregate has rows in two chunks.
func sharesAggregate(chunks []chunk) bool {
	in := map[string]int{}
	for i, c := range chunks {
		for _, e := range c.evs {
			if j, ok := in[e.AggregateID]; ok && j != i {
				return true
			}
			in[e.AggregateID] = i
		}
	}
	return false
}

// sendChunk sends c's rows in one SendBatch call and fills c.out with one
// outcome per row: the call's error, the entry's error, or Transient when
// the queue returned no result for the entry. The delays are computed from
// one clock reading taken before the call (see message); a row due further
// ahead than the queue's longest delay is not sent (Transient: it stays
// pending, and the relay claims it once it is due).
func (r *Relay) sendChunk(ctx context.Context, c chunk) {
	msgs := make([]queue.OutMessage, 0, len(c.evs))
	now := r.cfg.Now()
	early := map[string]bool{}
	for _, e := range c.evs {
		m, ok := message(e, now)
		if !ok {
			early[e.ID] = true
			continue
		}
		msgs = append(msgs, m)
	}
	var res []queue.SendResult
	var err error
	if len(msgs) > 0 {
		res, err = r.cfg.Queue.SendBatch(ctx, c.url, msgs)
	}
	byID := make(map[string]error, len(res))
	got := make(map[string]bool, len(res))
	for _, sr := range res {
		byID[sr.ID], got[sr.ID] = sr.Err, true
	}
	for i, e := range c.evs {
		switch {
		case early[e.ID]:
			c.out[i] = outcome{event: e, err: apperr.New(apperr.Transient, "row %s is due at %s, beyond the queue's longest delay (%s)", e.ID, e.NextAttemptAt.Format(time.RFC3339), queue.MaxDelay)}
		case err != nil:
			c.out[i] = outcome{event: e, err: err}
		case !got[e.ID]:
			c.out[i] = outcome{event: e, err: apperr.New(apperr.Transient, "queue returned no result for entry %s", e.ID)}
		default:
			c.out[i] = outcome{event: e, err: byID[e.ID]}
		}
	}
}

// message is the queue message of outbox row e sent at now, a clock reading
// taken before the send. A row scheduled for later (a saga retry after
// backoff, a breaker wait) is sent now with a queue delay, so retries need
// not wait for the relay's timer; the delay is queue.DelayUntil's, rounded
// up to whole seconds, so the message is never delivered before the row is
// due. ok is false for a row due further ahead than the queue can delay a
// message (queue.MaxDelay): it must not be sent yet.
func message(e outbox.Event, now time.Time) (m queue.OutMessage, ok bool) {
	delay, ok := queue.DelayUntil(e.NextAttemptAt, now)
	return queue.OutMessage{ID: e.ID, Body: string(e.Payload), Attributes: e.Attributes(), Delay: delay}, ok
}

// Dispatch is the fast path of POST /orders: publish rows the request just
// committed (still leased to the request) and mark them published. It is
// best effort: any failure leaves the rows pending and the relay publishes
// them once the request's lease lapses.
//
// Rows PublishInTx already sent in their transaction (status published) are
// only counted, and their queues woken.
func (r *Relay) Dispatch(ctx context.Context, events []outbox.Event) {
	var inTx []outbox.Event
	pending := events[:0:0]
	for _, e := range events {
		if e.Status == outbox.StatusPublished {
			inTx = append(inTx, e)
		} else {
			pending = append(pending, e)
		}
	}
	if len(inTx) > 0 {
		r.committed(inTx)
	}
	events = pending
	if len(events) == 0 {
		return
	}
	start := time.Now()
	results := r.send(ctx, events)
	if err := crashed(results); err != nil {
		return // the process is dead: nothing is marked
	}
	var ok []outbox.Event
	for _, o := range results {
		if o.err == nil {
			ok = append(ok, o.event)
		}
	}
	if len(ok) == 0 {
		r.cfg.Log.Warn("fast-path dispatch sent nothing; the relay will publish", "events", len(events), "error", results[0].err)
		return
	}
	marks := make([]store.OutboxVersion, len(ok))
	for i, e := range ok {
		marks[i] = store.OutboxVersion{ID: e.ID, Version: e.Version}
	}
	err := r.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		// A row the relay took over meanwhile (version moved on) is skipped.
		_, err := tx.MarkOutboxPublished(ctx, marks, r.cfg.Now())
		return err
	})
	if err != nil {
		r.cfg.Log.Warn("fast-path mark published failed; rows will be sent again by the relay", "error", err)
		return
	}
	for _, e := range ok {
		r.cfg.Hooks.OnPublished(e.Destination, 1)
		logPublished(r.cfg.Log, e, "fast")
	}
	r.cfg.Log.Debug("fast-path dispatch", "events", len(ok), "took_ms", time.Since(start).Milliseconds())
}
