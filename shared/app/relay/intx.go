package relay

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// TxSender is a queue that can store messages inside a store transaction:
// the embedded queue (sqlitequeue) when it shares the SQLite store's file
// and connection. The cloud's Message Queue is not one; nor is a decorated
// queue that does not forward these methods (a fault injector, a counter),
// so those take the fast path after commit.
type TxSender interface {
	// SendInTx stores msgs in queueURL inside tx. ok false: it cannot write
	// in tx (another database) and wrote nothing. Results and errors are
	// SendBatch's; an error leaves no message of the call.
	SendInTx(ctx context.Context, tx store.Tx, queueURL string, msgs []queue.OutMessage) (results []queue.SendResult, ok bool, err error)
	// Committed says the messages SendInTx stored in queueURLs were
	// committed (long polls wake at once).
	Committed(queueURLs ...string)
}

// PublishInTx is the fast path inside the transaction that writes the rows,
// for a queue that can store messages in it (TxSender): it sends events —
// rows the caller is about to insert in tx and would otherwise hand to
// Dispatch after commit — in tx, and returns a copy of them with those sent
// marked published (status published, published at now, no lease). The caller
// inserts only the rows not so marked: a sent row's message, stored in the
// same transaction as the state change that made it, is itself the outbox
// entry, and a row beside it would only be written to be purged (it was
// about a fifth of POST /orders' time on the writer). The message commits
// with the transaction or not at all: no send after commit, no publish
// mark, no window in which a crash leaves it to be sent again. Rows it
// could not send (another queue, an entry the queue refuses, a row due
// further ahead than the queue's longest delay, any error)
// come back unchanged: they are inserted pending, leased as they were, and
// Dispatch or the relay sends them as before. It fails only when the database failed under it (any
// error but Invalid or NotFound, which only leave rows to the fast path):
// the transaction may be gone, so the caller must return the error and let
// the transaction fail. After commit, hand the returned rows to Dispatch as
// usual: it wakes the queues and counts the ones sent here.
//
// The caller decides which rows may go now exactly as for Dispatch (an
// aggregate's rows go in order: see outboxwrite.Writer.Write).
func (r *Relay) PublishInTx(ctx context.Context, tx store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	ts := r.ts
	if ts == nil || len(events) == 0 {
		return events, nil
	}
	now := r.cfg.Now()
	out := append([]outbox.Event(nil), events...)
	byDest := map[string][]int{}
	var dests []string
	for i, e := range out {
		if _, seen := byDest[e.Destination]; !seen {
			dests = append(dests, e.Destination)
		}
		byDest[e.Destination] = append(byDest[e.Destination], i)
	}
	for _, dest := range dests {
		url := r.cfg.URLs[dest]
		if url == "" {
			continue // Dispatch reports the missing queue
		}
		idx := byDest[dest]
		for start := 0; start < len(idx); start += queue.MaxBatch {
			chunk := idx[start:min(start+queue.MaxBatch, len(idx))]
			msgs := make([]queue.OutMessage, 0, len(chunk))
			for _, i := range chunk {
				if m, ok := message(out[i], now); ok {
					msgs = append(msgs, m)
				} // else due beyond the queue's longest delay: left pending for the relay
			}
			if len(msgs) == 0 {
				continue
			}
			res, ok, err := ts.SendInTx(ctx, tx, url, msgs)
			if !ok {
				continue // not for this queue: Dispatch sends these after commit
			}
			if apperr.Is(err, apperr.Invalid) || apperr.Is(err, apperr.NotFound) {
				r.cfg.Log.Warn("in-transaction publish refused; the fast path will send after commit", "destination", dest, "error", err)
				continue
			}
			if err != nil {
				return events, fmt.Errorf("in-transaction publish to %s: %w", dest, err)
			}
			sent := make(map[string]bool, len(res))
			for _, sr := range res {
				if sr.Err == nil {
					sent[sr.ID] = true
				}
			}
			for _, i := range chunk {
				if sent[out[i].ID] {
					out[i].Status, out[i].PublishedAt = outbox.StatusPublished, now
					out[i].LeaseOwner, out[i].LeaseUntil = "", time.Time{}
				}
			}
		}
	}
	return out, nil
}

// committed finishes rows PublishInTx sent, once their transaction has
// committed: it wakes their queues and counts and logs them.
func (r *Relay) committed(events []outbox.Event) {
	ts := r.ts
	if ts == nil {
		return
	}
	var urls []string
	seen := map[string]bool{}
	for _, e := range events {
		if u := r.cfg.URLs[e.Destination]; u != "" && !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
		r.cfg.Hooks.OnPublished(e.Destination, 1)
		logPublished(r.cfg.Log, e, "in_tx")
	}
	ts.Committed(urls...)
}
