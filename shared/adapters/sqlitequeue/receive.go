package sqlitequeue

import (
	"context"
	"database/sql"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// Receive implements queue.Queue. Each attempt is one BEGIN IMMEDIATE
// transaction; a long poll repeats attempts until a message is delivered or
// opts.Wait has passed, sleeping until it is woken by a change through this
// Queue, the next message is due to become visible, or PollInterval passes.
func (q *Queue) Receive(ctx context.Context, queueURL string, opts queue.ReceiveOptions) ([]queue.Message, error) {
	name, err := nameOf(queueURL)
	if err != nil {
		return nil, err
	}
	if opts, err = queue.CheckReceive(opts); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(opts.Wait)
	for {
		woken := q.wakeup(name)
		msgs, next, err := q.receiveOnce(ctx, name, opts)
		if err != nil || len(msgs) > 0 {
			return msgs, err
		}
		sleep := time.Until(deadline)
		if sleep <= 0 {
			return nil, nil
		}
		sleep = min(sleep, q.poll)
		if !next.IsZero() {
			sleep = min(sleep, max(next.Sub(q.now()), time.Millisecond))
		}
		timer := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, apperr.Wrap(apperr.Transient, ctx.Err(), "sqlitequeue: receive")
		case <-woken:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// candidate is a visible message picked for delivery.
type candidate struct {
	seq          int64
	messageID    string
	body         string
	attributes   sql.NullString
	sentAtMS     int64
	receiveCount int
}

// receiveOnce delivers up to opts.Max visible messages, moving those past
// the queue's MaxReceiveCount to its dead-letter queue. When it delivers
// nothing, next is when the earliest invisible message becomes visible (zero
// if there is none).
func (q *Queue) receiveOnce(ctx context.Context, name string, opts queue.ReceiveOptions) (msgs []queue.Message, next time.Time, err error) {
	var moved bool
	var dlq string
	err = q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		qr, err := lookup(ctx, conn, name)
		if err != nil {
			return err
		}
		dlq = qr.deadLetter
		vis := opts.VisibilityTimeout
		if vis == 0 {
			vis = qr.visibility
		}
		// Stored times have millisecond precision: a shorter timeout would
		// leave the message visible, and this loop would pick it again.
		vis = max(vis, time.Millisecond)
		now := q.now()
		for len(msgs) < opts.Max {
			limit := opts.Max - len(msgs)
			cands, err := visible(ctx, conn, name, ms(now), limit)
			if err != nil {
				return err
			}
			for _, c := range cands {
				if qr.maxReceiveCount > 0 && c.receiveCount+1 > qr.maxReceiveCount {
					if err := q.moveToDLQ(ctx, conn, c, qr.deadLetter, now); err != nil {
						return err
					}
					moved = true
					continue
				}
				m, err := q.deliver(ctx, conn, c, visibleAfter(now, vis))
				if err != nil {
					return err
				}
				msgs = append(msgs, m)
			}
			if len(cands) < limit { // no more visible messages
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	if moved {
		q.wake(dlq)
	}
	if len(msgs) == 0 {
		next, err = q.nextVisible(ctx, name)
	}
	return msgs, next, err
}

// visible selects up to limit visible messages, oldest first.
func visible(ctx context.Context, conn *sql.Conn, name string, nowMS int64, limit int) ([]candidate, error) {
	rows, err := conn.QueryContext(ctx, `
		SELECT seq, message_id, body, attributes, sent_at_ms, receive_count
		FROM queue_messages WHERE queue = ? AND visible_at_ms <= ?
		ORDER BY visible_at_ms, seq LIMIT ?`, name, nowMS, limit)
	if err != nil {
		return nil, classify(err, "sqlitequeue: select messages")
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.seq, &c.messageID, &c.body, &c.attributes, &c.sentAtMS, &c.receiveCount); err != nil {
			return nil, classify(err, "sqlitequeue: scan message")
		}
		out = append(out, c)
	}
	return out, classify(rows.Err(), "sqlitequeue: select messages")
}

// deliver marks c received: new receipt handle, receive count + 1, invisible
// until visibleAtMS (see visibleAfter).
func (q *Queue) deliver(ctx context.Context, conn *sql.Conn, c candidate, visibleAtMS int64) (queue.Message, error) {
	attrs, err := decodeAttributes(c.attributes)
	if err != nil {
		return queue.Message{}, err
	}
	handle := q.newID()
	if _, err := conn.ExecContext(ctx, `
		UPDATE queue_messages SET receipt_handle = ?, receive_count = receive_count + 1, visible_at_ms = ?
		WHERE seq = ?`, handle, visibleAtMS, c.seq); err != nil {
		return queue.Message{}, classify(err, "sqlitequeue: mark received")
	}
	return queue.Message{
		MessageID:     c.messageID,
		ReceiptHandle: handle,
		Body:          c.body,
		Attributes:    attrs,
		ReceiveCount:  c.receiveCount + 1,
		SentAt:        time.UnixMilli(c.sentAtMS),
	}, nil
}

// moveToDLQ moves c to the dead-letter queue, keeping its message id, body,
// attributes and sent time; there it starts visible and never received.
func (q *Queue) moveToDLQ(ctx context.Context, conn *sql.Conn, c candidate, dlq string, now time.Time) error {
	if _, err := conn.ExecContext(ctx, `
		INSERT INTO queue_messages (queue, message_id, body, attributes, sent_at_ms, visible_at_ms)
		SELECT ?, message_id, body, attributes, sent_at_ms, ? FROM queue_messages WHERE seq = ?`,
		dlq, ms(now), c.seq); err != nil {
		return classify(err, "sqlitequeue: copy to dead-letter queue")
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM queue_messages WHERE seq = ?`, c.seq); err != nil {
		return classify(err, "sqlitequeue: remove redriven message")
	}
	return nil
}

// nextVisible returns when the queue's earliest invisible message becomes
// visible, or the zero time if it has none.
func (q *Queue) nextVisible(ctx context.Context, name string) (time.Time, error) {
	var next sql.NullInt64
	err := q.db.QueryRowContext(ctx,
		`SELECT MIN(visible_at_ms) FROM queue_messages WHERE queue = ? AND visible_at_ms > ?`,
		name, ms(q.now())).Scan(&next)
	if err != nil {
		return time.Time{}, classify(err, "sqlitequeue: next visible")
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return time.UnixMilli(next.Int64), nil
}
