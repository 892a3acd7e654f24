package sqlitestore

import (
	"context"

	"ordersaga/shared/domain/dlq"
)

const (
	sqlInsertAudit = `INSERT INTO audit (id, at, actor, action, params, count, outcome, detail)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlListAudit = `SELECT id, at, actor, action, params, count, outcome, detail FROM audit
	ORDER BY at DESC, id DESC LIMIT ?`
)

// InsertAudit implements store.DeadLetterRows; Conflict if the id exists.
func (t *tx) InsertAudit(ctx context.Context, a dlq.AuditRecord) error {
	return t.insert(ctx, "audit record "+quoted(a.ID), sqlInsertAudit,
		a.ID, tm(a.At), a.Actor, a.Action, a.Params, a.Count, a.Outcome, a.Detail)
}

// ListAudit implements store.DeadLetterRows: newest At first (ties by ID
// descending). limit <= 0 returns nothing.
func (t *tx) ListAudit(ctx context.Context, limit int) ([]dlq.AuditRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []dlq.AuditRecord
	err := t.queryAll(ctx, "list audit records", sqlListAudit, []any{limit}, func(r rowScanner) error {
		var (
			a  dlq.AuditRecord
			at int64
		)
		err := r.Scan(&a.ID, &at, &a.Actor, &a.Action, &a.Params, &a.Count, &a.Outcome, &a.Detail)
		a.At = fromTm(at)
		out = append(out, a)
		return err
	})
	return out, err
}
