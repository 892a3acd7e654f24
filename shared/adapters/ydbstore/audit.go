package ydbstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/dlq"
)

// Table audit (schema/ydb/0009_audit.sql).

const auditColumns = "id, `at`, actor, `action`, params, `count`, outcome, detail"

const (
	yqlAuditExists = `
DECLARE $id AS Utf8;
SELECT id FROM audit WHERE id = $id;`

	yqlInsertAudit = `
DECLARE $id AS Utf8;
DECLARE $col_at AS Optional<Timestamp>;
DECLARE $actor AS Utf8;
DECLARE $col_action AS Utf8;
DECLARE $params AS Optional<String>;
DECLARE $col_count AS Int64;
DECLARE $outcome AS Utf8;
DECLARE $detail AS Optional<String>;
INSERT INTO audit (` + auditColumns + `)
VALUES ($id, $col_at, $actor, $col_action, $params, $col_count, $outcome, $detail);`

	// Newest first (a NULL time is the oldest), ties by id descending:
	// idx_at (migration 0014) read backwards in index order with LIMIT
	// (the range at >= the epoch, which holds every non-NULL time), and
	// the NULL point prefix in id order; the adapter puts the NULLs last.
	// At most 2 x LIMIT rows, whatever the size of the log.
	yqlListAudit = `
DECLARE $epoch AS Timestamp;
DECLARE $limit AS Uint64;
$dated = SELECT ` + auditColumns + ` FROM audit VIEW idx_at
WHERE ` + "`at`" + ` >= $epoch
ORDER BY ` + "`at`" + ` DESC, id DESC LIMIT $limit;
$undated = SELECT ` + auditColumns + ` FROM audit VIEW idx_at
WHERE ` + "`at`" + ` IS NULL
ORDER BY id DESC LIMIT $limit;
SELECT * FROM $dated UNION ALL SELECT * FROM $undated;`
)

// InsertAudit implements store.DeadLetterRows; Conflict if the id exists.
func (t *tx) InsertAudit(ctx context.Context, a dlq.AuditRecord) error {
	return t.insert(ctx, rowKey("audit", a.ID), "audit record "+quoted(a.ID), 0, yqlAuditExists, idParam(a.ID),
		yqlInsertAudit, auditParams(a))
}

// ListAudit implements store.DeadLetterRows: newest At first (ties by ID
// descending). limit <= 0 returns nothing.
func (t *tx) ListAudit(ctx context.Context, limit int) ([]dlq.AuditRecord, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []dlq.AuditRecord
	err := t.rows(ctx, "list audit records", yqlListAudit,
		newParams().ts("$epoch", time.Unix(0, 0)).uint("$limit", uint64(limit)),
		func(r query.Row) error {
			var (
				a     dlq.AuditRecord
				at    *time.Time
				count int64
			)
			if err := r.ScanNamed(
				query.Named("id", &a.ID),
				query.Named("at", &at),
				query.Named("actor", &a.Actor),
				query.Named("action", &a.Action),
				query.Named("params", &a.Params),
				query.Named("count", &count),
				query.Named("outcome", &a.Outcome),
				query.Named("detail", &a.Detail),
			); err != nil {
				return err
			}
			a.At, a.Count = fromTS(at), int(count)
			out = append(out, a)
			return nil
		})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b dlq.AuditRecord) int {
		if a.At.IsZero() != b.At.IsZero() {
			if a.At.IsZero() {
				return 1
			}
			return -1
		}
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out[:min(len(out), limit)], nil
}

func auditParams(a dlq.AuditRecord) *paramList {
	return newParams().
		text("$id", a.ID).
		optTS("$col_at", a.At).
		text("$actor", a.Actor).
		text("$col_action", a.Action).
		bytes("$params", a.Params).
		int("$col_count", int64(a.Count)).
		text("$outcome", a.Outcome).
		bytes("$detail", a.Detail)
}
