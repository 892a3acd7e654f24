package sqlitequeue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// queueRow is a row of queue_queues.
type queueRow struct {
	visibility      time.Duration
	maxReceiveCount int
	deadLetter      string
}

// execer runs statements: a connection inside one of the queue's own
// transactions, or a store transaction on the same database (SendInTx).
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// lookup reads a queue's settings; NotFound if it does not exist.
func lookup(ctx context.Context, conn execer, name string) (queueRow, error) {
	var r queueRow
	var visMS int64
	err := conn.QueryRowContext(ctx,
		`SELECT visibility_timeout_ms, max_receive_count, dead_letter_queue FROM queue_queues WHERE name = ?`, name,
	).Scan(&visMS, &r.maxReceiveCount, &r.deadLetter)
	if errors.Is(err, sql.ErrNoRows) {
		return r, apperr.New(apperr.NotFound, "sqlitequeue: queue %q does not exist", name)
	}
	if err != nil {
		return r, classify(err, "sqlitequeue: read queue")
	}
	r.visibility = time.Duration(visMS) * time.Millisecond
	return r, nil
}

// Ensure implements queue.Queue: it creates the queue or updates its
// visibility timeout and redrive policy to match spec.
func (q *Queue) Ensure(ctx context.Context, spec queue.QueueSpec) (string, error) {
	if err := queue.CheckSpec(spec); err != nil {
		return "", err
	}
	dlq := ""
	if spec.DeadLetterQueueURL != "" {
		var err error
		if dlq, err = nameOf(spec.DeadLetterQueueURL); err != nil {
			return "", err
		}
	}
	vis := spec.VisibilityTimeout
	if vis == 0 {
		vis = queue.DefaultVisibilityTimeout
	}
	err := q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		if dlq != "" {
			if _, err := lookup(ctx, conn, dlq); err != nil {
				return err
			}
		}
		_, err := conn.ExecContext(ctx, `
			INSERT INTO queue_queues (name, visibility_timeout_ms, max_receive_count, dead_letter_queue, created_at_ms)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET
				visibility_timeout_ms = excluded.visibility_timeout_ms,
				max_receive_count = excluded.max_receive_count,
				dead_letter_queue = excluded.dead_letter_queue`,
			spec.Name, vis.Milliseconds(), spec.MaxReceiveCount, dlq, ms(q.now()))
		return classify(err, "sqlitequeue: upsert queue")
	})
	if err != nil {
		return "", err
	}
	return URL(spec.Name), nil
}

// SendBatch implements queue.Queue. The valid entries are stored in one
// transaction, so they are all sent or (whole-call error) none is.
func (q *Queue) SendBatch(ctx context.Context, queueURL string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	name, entryErrs, err := checkSend(queueURL, msgs)
	if err != nil {
		return nil, err
	}
	var results []queue.SendResult
	err = q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		var err error
		results, err = q.insert(ctx, conn, name, msgs, entryErrs)
		return err
	})
	if err != nil {
		return nil, err
	}
	q.wake(name)
	return results, nil
}

// SendInTx stores msgs in queueURL inside tx, a transaction of a store on
// this Queue's own database handle (the SQLite store sharing the queue's
// file, see store.SQLTx): the messages exist exactly when tx commits, and
// vanish with it if it rolls back. ok is false, and nothing is written,
// when tx is not such a transaction; the caller then sends with SendBatch
// after its commit. Results and errors are SendBatch's. The valid entries
// are written by one statement, so a failed call leaves none of them. Once
// tx has committed, call Committed so long polls see the messages at once
// (otherwise they see them at their next poll).
func (q *Queue) SendInTx(ctx context.Context, tx store.Tx, queueURL string, msgs []queue.OutMessage) (results []queue.SendResult, ok bool, err error) {
	st, isSQL := tx.(store.SQLTx)
	if !isSQL || st.SQLDB() != q.db {
		return nil, false, nil
	}
	name, entryErrs, err := checkSend(queueURL, msgs)
	if err != nil {
		return nil, true, err
	}
	results, err = q.insert(ctx, st, name, msgs, entryErrs)
	return results, true, err
}

// Committed wakes the long polls of the queues SendInTx wrote to.
func (q *Queue) Committed(queueURLs ...string) {
	names := make([]string, 0, len(queueURLs))
	for _, u := range queueURLs {
		if name, err := nameOf(u); err == nil {
			names = append(names, name)
		}
	}
	q.wake(names...)
}

func checkSend(queueURL string, msgs []queue.OutMessage) (string, []error, error) {
	name, err := nameOf(queueURL)
	if err != nil {
		return "", nil, err
	}
	entryErrs, err := queue.CheckBatch(msgs)
	return name, entryErrs, err
}

// exists reports whether a send found the queue before. The adapter never
// deletes a queue (Ensure creates or updates one), so once found it stays:
// later sends skip the look-up.
func (q *Queue) exists(name string) bool {
	_, ok := q.known.Load(name)
	return ok
}

// insert stores the entries of msgs without an error in entryErrs with one
// multi-row INSERT (one statement: all or none), after checking the queue
// exists.
func (q *Queue) insert(ctx context.Context, ex execer, name string, msgs []queue.OutMessage, entryErrs []error) ([]queue.SendResult, error) {
	if !q.exists(name) {
		if _, err := lookup(ctx, ex, name); err != nil {
			return nil, err
		}
		q.known.Store(name, true)
	}
	now := q.now()
	results := make([]queue.SendResult, len(msgs))
	var sb strings.Builder
	sb.WriteString(`INSERT INTO queue_messages (queue, message_id, body, attributes, sent_at_ms, visible_at_ms) VALUES `)
	args := make([]any, 0, 6*len(msgs))
	for i, m := range msgs {
		results[i] = queue.SendResult{ID: m.ID, Err: entryErrs[i]}
		if entryErrs[i] != nil {
			continue
		}
		attrs, err := encodeAttributes(m.Attributes)
		if err != nil {
			return nil, err
		}
		if len(args) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?)")
		results[i].MessageID = q.newID()
		args = append(args, name, results[i].MessageID, m.Body, attrs, ms(now), visibleAfter(now, m.Delay))
	}
	if len(args) == 0 {
		return results, nil
	}
	if _, err := ex.ExecContext(ctx, sb.String(), args...); err != nil {
		return nil, classify(err, "sqlitequeue: insert messages")
	}
	return results, nil
}

// Delete implements queue.Queue.
func (q *Queue) Delete(ctx context.Context, queueURL, receiptHandle string) error {
	name, err := nameOf(queueURL)
	if err != nil {
		return err
	}
	if err := queue.CheckReceiptHandle(receiptHandle); err != nil {
		return err
	}
	return q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := lookup(ctx, conn, name); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, `DELETE FROM queue_messages WHERE queue = ? AND receipt_handle = ?`, name, receiptHandle)
		return classify(err, "sqlitequeue: delete message")
	})
}

// DeleteBatch deletes the messages of queueURL that the receipt handles
// name, in one transaction: the local queue trigger (shared/transport/mqtrigger)
// acknowledges a batch with one call instead of one per message, as Message
// Queue's DeleteMessageBatch does. A handle that names no message (deleted
// or received again meanwhile) is skipped, as Delete does; a malformed one
// fails the call before anything is deleted.
func (q *Queue) DeleteBatch(ctx context.Context, queueURL string, receiptHandles []string) error {
	name, err := nameOf(queueURL)
	if err != nil {
		return err
	}
	if len(receiptHandles) == 0 || len(receiptHandles) > queue.MaxBatch {
		return apperr.New(apperr.Invalid, "sqlitequeue: delete batch of %d handles (want 1..%d)", len(receiptHandles), queue.MaxBatch)
	}
	args := make([]any, 0, 1+len(receiptHandles))
	args = append(args, name)
	for _, h := range receiptHandles {
		if err := queue.CheckReceiptHandle(h); err != nil {
			return err
		}
		args = append(args, h)
	}
	query := `DELETE FROM queue_messages WHERE queue = ? AND receipt_handle IN (?` +
		strings.Repeat(", ?", len(receiptHandles)-1) + `)`
	return q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := lookup(ctx, conn, name); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, query, args...)
		return classify(err, "sqlitequeue: delete messages")
	})
}

// ChangeVisibility implements queue.Queue.
func (q *Queue) ChangeVisibility(ctx context.Context, queueURL, receiptHandle string, d time.Duration) error {
	name, err := nameOf(queueURL)
	if err != nil {
		return err
	}
	if err := queue.CheckVisibility(receiptHandle, d); err != nil {
		return err
	}
	err = q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := lookup(ctx, conn, name); err != nil {
			return err
		}
		res, err := conn.ExecContext(ctx, `UPDATE queue_messages SET visible_at_ms = ? WHERE queue = ? AND receipt_handle = ?`,
			visibleAfter(q.now(), d), name, receiptHandle)
		if err != nil {
			return classify(err, "sqlitequeue: change visibility")
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return apperr.New(apperr.NotFound, "sqlitequeue: no message in flight with this receipt handle")
		}
		return nil
	})
	if err == nil && d == 0 {
		q.wake(name)
	}
	return err
}

// Depth implements queue.Queue. The counts are exact at the moment of the
// query.
func (q *Queue) Depth(ctx context.Context, queueURL string) (visible, inFlight int, err error) {
	name, err := nameOf(queueURL)
	if err != nil {
		return 0, 0, err
	}
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return 0, 0, classify(err, "sqlitequeue: get connection")
	}
	defer conn.Close()
	if _, err := lookup(ctx, conn, name); err != nil {
		return 0, 0, err
	}
	now := ms(q.now())
	err = conn.QueryRowContext(ctx, `
		SELECT
			COALESCE(SUM(visible_at_ms <= ?), 0),
			COALESCE(SUM(visible_at_ms > ? AND receipt_handle IS NOT NULL), 0)
		FROM queue_messages WHERE queue = ?`, now, now, name).Scan(&visible, &inFlight)
	if err != nil {
		return 0, 0, classify(err, "sqlitequeue: count messages")
	}
	return visible, inFlight, nil
}

// encodeAttributes stores attributes as a JSON object, or NULL when none.
func encodeAttributes(attrs map[string]string) (any, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitequeue: encode attributes")
	}
	return string(b), nil
}

// decodeAttributes is the inverse of encodeAttributes.
func decodeAttributes(s sql.NullString) (map[string]string, error) {
	if !s.Valid || s.String == "" {
		return nil, nil
	}
	var attrs map[string]string
	if err := json.Unmarshal([]byte(s.String), &attrs); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitequeue: decode attributes")
	}
	return attrs, nil
}
