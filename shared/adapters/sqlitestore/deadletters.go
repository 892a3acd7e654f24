package sqlitestore

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

const deadLetterColumns = `id, source, source_ref, queue, payload, attrs, error_type, error,
	retry_count, first_failed_at, last_failed_at, history, status, redrive_count, flagged,
	resolved_at, resolved_by, idempotency_key, order_id, outbox_event_id, saga_id, created_at,
	updated_at, version`

const (
	sqlInsertDeadLetter = `INSERT INTO dead_letters (` + deadLetterColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlGetDeadLetter  = `SELECT ` + deadLetterColumns + ` FROM dead_letters WHERE id = ?`
	sqlFindDeadLetter = `SELECT ` + deadLetterColumns + ` FROM dead_letters
	WHERE source = ? AND source_ref = ? ORDER BY created_at DESC, id DESC LIMIT 1`
	sqlUpdateDeadLetter = `UPDATE dead_letters SET source = ?, source_ref = ?, queue = ?, payload = ?,
	attrs = ?, error_type = ?, error = ?, retry_count = ?, first_failed_at = ?, last_failed_at = ?,
	history = ?, status = ?, redrive_count = ?, flagged = ?, resolved_at = ?, resolved_by = ?,
	idempotency_key = ?, order_id = ?, outbox_event_id = ?, saga_id = ?, created_at = ?,
	updated_at = ?, version = ?
	WHERE id = ? AND version = ?`
	sqlDeadLetterExists = `SELECT 1 FROM dead_letters WHERE id = ?`
	sqlDeleteDeadLetter = `DELETE FROM dead_letters WHERE id = ?`
	// ListDeadLetters appends "AND <condition>" for each filter field set and
	// for the cursor, then sqlListDeadLettersOrder.
	sqlListDeadLetters      = `SELECT ` + deadLetterColumns + ` FROM dead_letters WHERE 1 = 1`
	sqlListDeadLettersOrder = ` ORDER BY last_failed_at DESC, id DESC LIMIT ?`
)

// Page sizes of ListDeadLetters.
const (
	defaultPageLimit = 50
	maxPageLimit     = 1000
)

// InsertDeadLetter implements store.DeadLetterRows; Conflict if the id exists.
func (t *tx) InsertDeadLetter(ctx context.Context, d dlq.DeadLetter) error {
	args, err := deadLetterArgs(d)
	if err != nil {
		return err
	}
	return t.insert(ctx, "dead letter "+quoted(d.ID), sqlInsertDeadLetter, append([]any{d.ID}, args...)...)
}

// GetDeadLetter implements store.DeadLetterRows; NotFound if missing.
func (t *tx) GetDeadLetter(ctx context.Context, id string) (dlq.DeadLetter, error) {
	d, err := scanDeadLetter(t.queryRowContext(ctx, sqlGetDeadLetter, id))
	if err != nil {
		return dlq.DeadLetter{}, getErr(ctx, err, "dead letter "+quoted(id))
	}
	return d, nil
}

// FindDeadLetter implements store.DeadLetterRows: the newest (by CreatedAt, then
// ID) entry with this source and ref; NotFound if none.
func (t *tx) FindDeadLetter(ctx context.Context, src dlq.Source, ref string) (dlq.DeadLetter, error) {
	d, err := scanDeadLetter(t.queryRowContext(ctx, sqlFindDeadLetter, string(src), ref))
	if err != nil {
		return dlq.DeadLetter{}, getErr(ctx, err, "dead letter for "+string(src)+" "+quoted(ref))
	}
	return d, nil
}

// UpdateDeadLetter implements store.DeadLetterRows: it stores d (with d.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateDeadLetter(ctx context.Context, d dlq.DeadLetter, expectedVersion int64) error {
	args, err := deadLetterArgs(d)
	if err != nil {
		return err
	}
	return t.updateVersioned(ctx, "dead letter "+quoted(d.ID), expectedVersion, sqlUpdateDeadLetter,
		append(args, d.ID, expectedVersion), sqlDeadLetterExists, d.ID)
}

// DeleteDeadLetter implements store.DeadLetterRows; deleting a missing entry is
// not an error.
func (t *tx) DeleteDeadLetter(ctx context.Context, id string) error {
	_, err := t.exec(ctx, "delete dead letter", sqlDeleteDeadLetter, id)
	return err
}

// ListDeadLetters implements store.DeadLetterRows with keyset pagination on
// (last_failed_at desc, id desc). p.Limit <= 0 means 50, and it is capped at
// 1000. The cursor is opaque (base64 of the last entry's LastFailedAt and
// ID); a malformed cursor is Invalid.
func (t *tx) ListDeadLetters(ctx context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	limit = min(limit, maxPageLimit)
	var q strings.Builder
	q.WriteString(sqlListDeadLetters)
	var args []any
	cond := func(sql string, vals ...any) {
		q.WriteString(" AND " + sql)
		args = append(args, vals...)
	}
	if f.Source != "" {
		cond("source = ?", string(f.Source))
	}
	if f.Status != "" {
		cond("status = ?", string(f.Status))
	}
	if f.ErrorType != "" {
		cond("error_type = ?", f.ErrorType)
	}
	if f.OrderID != "" {
		cond("order_id = ?", f.OrderID)
	}
	if f.SagaID != "" {
		cond("saga_id = ?", f.SagaID)
	}
	if !f.From.IsZero() {
		cond("last_failed_at >= ?", tm(f.From))
	}
	if !f.To.IsZero() {
		cond("last_failed_at < ?", tm(f.To))
	}
	if f.Flagged != nil {
		cond("flagged = ?", boolInt(*f.Flagged))
	}
	if p.Cursor != "" {
		at, id, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		cond("(last_failed_at < ? OR (last_failed_at = ? AND id < ?))", at, at, id)
	}
	q.WriteString(sqlListDeadLettersOrder)
	args = append(args, limit+1) // one extra row tells whether a next page exists

	var out []dlq.DeadLetter
	err := t.queryAll(ctx, "list dead letters", q.String(), args, func(r rowScanner) error {
		d, err := scanDeadLetter(r)
		out = append(out, d)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, encodeCursor(tm(last.LastFailedAt), last.ID), nil
}

func encodeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + ":" + id))
}

func decodeCursor(c string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if at, id, ok := strings.Cut(string(b), ":"); ok {
			if v, perr := strconv.ParseInt(at, 10, 64); perr == nil {
				return v, id, nil
			}
		}
	}
	return 0, "", apperr.New(apperr.Invalid, "invalid page cursor")
}

// deadLetterArgs returns the column values of d after id, in
// deadLetterColumns order.
func deadLetterArgs(d dlq.DeadLetter) ([]any, error) {
	attrs, err := toJSON(d.Attrs, "dead letter attrs")
	if err != nil {
		return nil, err
	}
	// Failure times travel inside JSON; store them like every other time
	// (UTC, microseconds) so they come back the same way.
	history := d.History
	if len(history) > 0 {
		history = make([]dlq.Failure, len(d.History))
		for i, f := range d.History {
			f.At = fromTm(tm(f.At))
			history[i] = f
		}
	}
	hist, err := toJSON(history, "dead letter history")
	if err != nil {
		return nil, err
	}
	return []any{string(d.Source), d.SourceRef, d.Queue, d.Payload, attrs, d.ErrorType, note(d.Error),
		d.RetryCount, tm(d.FirstFailedAt), tm(d.LastFailedAt), hist, string(d.Status), d.RedriveCount,
		boolInt(d.Flagged), tm(d.ResolvedAt), d.ResolvedBy, d.IdempotencyKey, d.OrderID,
		d.OutboxEventID, d.SagaID, tm(d.CreatedAt), tm(d.UpdatedAt), d.Version}, nil
}

func scanDeadLetter(r rowScanner) (dlq.DeadLetter, error) {
	var (
		d                                       dlq.DeadLetter
		source, attrs, hist, status             string
		flagged                                 int64
		first, last, resolved, created, updated int64
	)
	if err := r.Scan(&d.ID, &source, &d.SourceRef, &d.Queue, &d.Payload, &attrs, &d.ErrorType,
		&d.Error, &d.RetryCount, &first, &last, &hist, &status, &d.RedriveCount, &flagged, &resolved,
		&d.ResolvedBy, &d.IdempotencyKey, &d.OrderID, &d.OutboxEventID, &d.SagaID, &created, &updated,
		&d.Version); err != nil {
		return dlq.DeadLetter{}, err
	}
	d.Source, d.Status, d.Flagged = dlq.Source(source), dlq.Status(status), flagged != 0
	d.FirstFailedAt, d.LastFailedAt, d.ResolvedAt = fromTm(first), fromTm(last), fromTm(resolved)
	d.CreatedAt, d.UpdatedAt = fromTm(created), fromTm(updated)
	if err := fromJSON(attrs, &d.Attrs, "dead letter attrs"); err != nil {
		return dlq.DeadLetter{}, err
	}
	return d, fromJSON(hist, &d.History, "dead letter history")
}
