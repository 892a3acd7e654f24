package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// The in-transaction mode (Options.InTx) lets the local fast path inside
// the transaction run under the faults: the decorators below forward the
// ports the plain ones hide (outboxwrite.TxPublisher on the dispatcher, relay.TxSender on the queue), so POST /orders, the
// advancer and the recovery store their messages in the transaction that
// writes the state change, and write no outbox row for them (see
// relay.Relay.PublishInTx). The checker then takes the queue's own record of
// committed messages (sentTable) as the outbox entries of those events.

// txDropper is a dropper that also publishes inside the transaction, when
// its inner dispatcher can. No crash is injected there: a crash before
// commit is a rollback, which faultyStore injects already; Dispatch after
// commit keeps the dropper's crash (for rows sent in the transaction it only
// skips counting them and waking their queues).
type txDropper struct{ *dropper }

var _ outboxwrite.TxPublisher = (*txDropper)(nil)

// PublishInTx implements outboxwrite.TxPublisher by forwarding to the inner
// dispatcher (rows unchanged when it cannot publish in a transaction).
func (d *txDropper) PublishInTx(ctx context.Context, tx store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	p, ok := d.inner.(outboxwrite.TxPublisher)
	if !ok {
		return events, nil
	}
	out, err := p.PublishInTx(ctx, tx, events)
	if err == nil {
		var sent []outbox.Event
		for _, e := range out {
			if e.Status == outbox.StatusPublished {
				sent = append(sent, e)
			}
		}
		d.origin.note(sent, d.who+" (in-tx)")
	}
	return out, err
}

// txFaultyQueue is a faultyQueue that forwards relay.TxSender to the inner
// queue, with faults on SendInTx: a refusal (Invalid: nothing stored, the
// rows stay pending for the fast path after commit and the relay) and a
// database-like failure (Transient, half before storing anything, half
// after storing the messages; PublishInTx returns it and the whole
// transaction fails, messages included).
type txFaultyQueue struct {
	*faultyQueue
	// sent counts the messages SendInTx stored (in transactions that may
	// still roll back), each once however often its transaction ran.
	sent *tally
}

var _ relay.TxSender = (*txFaultyQueue)(nil)

// SendInTx implements relay.TxSender.
func (q *txFaultyQueue) SendInTx(ctx context.Context, tx store.Tx, url string, msgs []queue.OutMessage) ([]queue.SendResult, bool, error) {
	ts, ok := q.inner.(relay.TxSender)
	if !ok {
		return nil, false, nil
	}
	if q.refuse != nil && q.refuse(url) != nil {
		return nil, true, apperr.New(apperr.Invalid, "chaos: the queue is down; the rows wait for the relay")
	}
	// SendInTx runs inside a transaction the store may run again: the
	// batch's decisions are drawn on its first send and kept for every
	// later run (once), named by the url and the first message's event.
	key := url
	if len(msgs) > 0 {
		key += "/" + outKey(msgs[0])
	}
	if q.in.once(q.faults, "queue_send_in_tx_refused", q.f.QueueSendInTxRefused, key) {
		return nil, true, apperr.New(apperr.Invalid, "chaos: queue refused the in-transaction send")
	}
	if q.in.once(nil, "queue_send_in_tx_failed", q.f.QueueSendInTxFailed, key) {
		if q.in.once(q.faults, "queue_send_in_tx_failed_before", 0.5, key) {
			return nil, true, errQueue("in-transaction send")
		}
		res, ok, err := ts.SendInTx(ctx, tx, url, msgs)
		if ok && err == nil {
			q.faults.once("queue_send_in_tx_failed_after", key)
			return nil, true, errQueue("in-transaction send answer")
		}
		return res, ok, err
	}
	res, ok, err := ts.SendInTx(ctx, tx, url, msgs)
	if ok && err == nil {
		for _, r := range res {
			if r.Err == nil {
				q.sent.once("in_tx_sends", key+"/"+r.ID)
			}
		}
	}
	return res, ok, err
}

// Committed implements relay.TxSender.
func (q *txFaultyQueue) Committed(urls ...string) {
	if ts, ok := q.inner.(relay.TxSender); ok {
		ts.Committed(urls...)
	}
}

// sentTable is the chaos run's record of every message the embedded queue
// committed: a trigger on queue_messages copies each inserted message (a
// send after commit, a send in a store transaction, a move to the DLQ) in
// the same transaction, so a row exists exactly when the message was
// committed, and stays after the message is consumed and deleted. The
// product never reads it.
const sentTable = "chaos_sent"

var sentSchema = []string{
	`CREATE TABLE IF NOT EXISTS ` + sentTable + ` (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		queue      TEXT NOT NULL,
		message_id TEXT NOT NULL,
		attributes TEXT
	)`,
	`CREATE TRIGGER IF NOT EXISTS chaos_sent_record AFTER INSERT ON queue_messages BEGIN
		INSERT INTO ` + sentTable + ` (queue, message_id, attributes) VALUES (NEW.queue, NEW.message_id, NEW.attributes);
	END`,
}

// recordSent installs sentTable and its trigger on the store's database.
func recordSent(ctx context.Context, db *sql.DB) error {
	for _, q := range sentSchema {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("chaos: record sent messages: %w", err)
		}
	}
	return nil
}

// sentMsg is one committed message of sentTable, read as the outbox event
// it carries.
type sentMsg struct {
	queue string // queue name
	event outbox.Event
}

// readSent lists sentTable in commit order.
func readSent(ctx context.Context, db *sql.DB) ([]sentMsg, error) {
	rows, err := db.QueryContext(ctx, `SELECT queue, message_id, COALESCE(attributes, '') FROM `+sentTable+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read sent messages: %w", err)
	}
	defer rows.Close()
	var out []sentMsg
	for rows.Next() {
		var name, id, raw string
		if err := rows.Scan(&name, &id, &raw); err != nil {
			return nil, fmt.Errorf("chaos: read sent messages: %w", err)
		}
		attrs := map[string]string{}
		if raw != "" {
			if err := json.Unmarshal([]byte(raw), &attrs); err != nil {
				return nil, fmt.Errorf("chaos: sent message %s: attributes: %w", id, err)
			}
		}
		out = append(out, sentMsg{queue: name, event: outbox.Event{ID: eventID(attrs, id), EventType: attrs[outbox.AttrEventType],
			AggregateType: attrs[outbox.AttrAggregateType], AggregateID: attrs[outbox.AttrAggregateID], Status: outbox.StatusPublished}})
	}
	return out, rows.Err()
}

// indexSent adds to the committed events those whose message the queue
// committed in their transaction with no outbox row (InTx). Such a message
// is the event's outbox entry, so it must belong to a committed state
// change: an order or saga that exists, and for an order's final event the
// status it announces. Messages of outbox rows (sent after commit) and
// copies in the DLQ are judged by the row.
func (c *checker) indexSent() {
	rows := map[string]bool{}
	for _, e := range c.s.outbox {
		rows[e.ID] = true
	}
	dest := map[string]string{}
	for u, d := range map[string]string{c.w.cmdURL: outbox.DestSagaCommands, c.w.eventsURL: outbox.DestOrderEvents} {
		dest[sqlitequeueName(u)] = d
	}
	n := map[string]int{}
	for _, m := range c.s.sent {
		e := m.event
		e.Destination = dest[m.queue]
		if e.Destination == "" || rows[e.ID] {
			continue
		}
		if n[e.ID]++; n[e.ID] > 1 {
			c.fail("event %s (%s) sent in its transaction was committed to %s %d times", e.ID, e.EventType, m.queue, n[e.ID])
			continue
		}
		if why := c.uncommitted(e); why != "" {
			c.fail("a message for event %s (%s of %s %s) was committed to %s with no outbox row, but %s",
				e.ID, e.EventType, e.AggregateType, e.AggregateID, m.queue, why)
			continue
		}
		if c.events[e.AggregateID] == nil {
			c.events[e.AggregateID] = map[string]bool{}
		}
		c.events[e.AggregateID][e.EventType] = true
		c.committed[e.ID] = true
		c.inTx = append(c.inTx, e)
	}
}

// uncommitted says why no committed transaction can have produced e ("" if
// one can): its order or saga does not exist, or the order's status is not
// the one its final event announces.
func (c *checker) uncommitted(e outbox.Event) string {
	switch e.AggregateType {
	case "saga":
		if _, ok := c.s.sagas[e.AggregateID]; !ok {
			return "that saga was never committed"
		}
		if e.EventType != outbox.TypeSagaAdvance || e.Destination != outbox.DestSagaCommands {
			return "a saga only sends saga.advance to saga-commands"
		}
	case "order":
		o, ok := c.s.orders[e.AggregateID]
		if !ok {
			return "that order was never committed"
		}
		if e.Destination != outbox.DestOrderEvents {
			return "an order's events go to order-events"
		}
		if e.EventType != outbox.TypeOrderCreated && finalEvent[o.Status] != e.EventType {
			return fmt.Sprintf("the order is %s", o.Status)
		}
	default:
		return "it names no order or saga"
	}
	return ""
}

// inTxPublished: every event sent in its transaction was delivered — a
// saga command to the advancer or the DLQ (a command run in place is never
// sent), an order event into order-events.
func (c *checker) inTxPublished() {
	for _, e := range c.inTx {
		switch e.Destination {
		case outbox.DestSagaCommands:
			if c.w.delivered[e.ID] == 0 && c.s.inDLQ[e.ID] == 0 {
				c.fail("event %s (saga.advance), sent in its transaction, never reached the advancer or the DLQ", e.ID)
			}
		case outbox.DestOrderEvents:
			if c.s.inEvents[e.ID] == 0 {
				c.fail("event %s (%s), sent in its transaction, is not in order-events", e.ID, e.EventType)
			}
		}
	}
}

// sqlitequeueName is the queue name of an embedded queue's URL.
func sqlitequeueName(url string) string { return strings.TrimPrefix(url, sqlitequeue.URLPrefix) }
