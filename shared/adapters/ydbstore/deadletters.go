package ydbstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

// Table dead_letters (schema/ydb/0008_dead_letters.sql); the audit table is
// in audit.go. Row encoding and the page cursor are in deadletters_codec.go.

const deadLetterColumns = "id, `source`, source_ref, `queue`, payload, attrs, error_type, `error`, " +
	"retry_count, first_failed_at, last_failed_at, history, status, redrive_count, flagged, " +
	"resolved_at, resolved_by, idempotency_key, order_id, outbox_event_id, saga_id, created_at, " +
	"updated_at, version"

const deadLetterDeclares = `
DECLARE $id AS Utf8;
DECLARE $col_source AS Utf8;
DECLARE $source_ref AS Utf8;
DECLARE $col_queue AS Utf8;
DECLARE $payload AS Optional<String>;
DECLARE $attrs AS Json;
DECLARE $error_type AS Utf8;
DECLARE $col_error AS Utf8;
DECLARE $retry_count AS Int64;
DECLARE $first_failed_at AS Optional<Timestamp>;
DECLARE $last_failed_at AS Optional<Timestamp>;
DECLARE $history AS Json;
DECLARE $status AS Utf8;
DECLARE $redrive_count AS Int64;
DECLARE $flagged AS Bool;
DECLARE $resolved_at AS Optional<Timestamp>;
DECLARE $resolved_by AS Utf8;
DECLARE $idempotency_key AS Utf8;
DECLARE $order_id AS Utf8;
DECLARE $outbox_event_id AS Utf8;
DECLARE $saga_id AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
`

const deadLetterValues = `($id, $col_source, $source_ref, $col_queue, $payload, $attrs, $error_type,
	$col_error, $retry_count, $first_failed_at, $last_failed_at, $history, $status, $redrive_count,
	$flagged, $resolved_at, $resolved_by, $idempotency_key, $order_id, $outbox_event_id, $saga_id,
	$created_at, $updated_at, $version)`

const (
	yqlInsertDeadLetter = deadLetterDeclares + `
INSERT INTO dead_letters (` + deadLetterColumns + `)
VALUES ` + deadLetterValues + `;`

	yqlUpsertDeadLetter = deadLetterDeclares + `
UPSERT INTO dead_letters (` + deadLetterColumns + `)
VALUES ` + deadLetterValues + `;`

	yqlGetDeadLetter = `
DECLARE $id AS Utf8;
SELECT ` + deadLetterColumns + ` FROM dead_letters WHERE id = $id;`

	yqlDeadLetterVersion = `
DECLARE $id AS Utf8;
SELECT version FROM dead_letters WHERE id = $id;`

	// The entries of a source ref: the point prefix (source, source_ref)
	// of idx_source_ref, a few rows (one per time the same work was
	// dead-lettered again after a redrive). FindDeadLetter picks the newest
	// in Go: created_at is not in the index, so an ORDER BY could not stop
	// early anyway, and YQL does not document where NULL sorts.
	yqlFindDeadLetter = `
DECLARE $col_source AS Utf8;
DECLARE $source_ref AS Utf8;
SELECT ` + deadLetterColumns + ` FROM dead_letters VIEW idx_source_ref
WHERE ` + "`source`" + ` = $col_source AND source_ref = $source_ref;`

	yqlDeleteDeadLetter = `
DECLARE $id AS Utf8;
DELETE FROM dead_letters WHERE id = $id;`
)

// Page sizes of ListDeadLetters (as in sqlitestore).
const (
	defaultPageLimit = 50
	maxPageLimit     = 1000
)

// InsertDeadLetter implements store.DeadLetterRows; Conflict if the id exists.
func (t *tx) InsertDeadLetter(ctx context.Context, d dlq.DeadLetter) error {
	return t.insert(ctx, rowKey("dead_letters", d.ID), "dead letter "+quoted(d.ID), d.Version, yqlDeadLetterVersion, idParam(d.ID),
		yqlInsertDeadLetter, deadLetterParams(d))
}

// GetDeadLetter implements store.DeadLetterRows; NotFound if missing.
func (t *tx) GetDeadLetter(ctx context.Context, id string) (dlq.DeadLetter, error) {
	var d dlq.DeadLetter
	err := t.get(ctx, "dead letter "+quoted(id), yqlGetDeadLetter, idParam(id), func(r query.Row) (err error) {
		d, err = scanDeadLetter(r)
		return err
	})
	t.sawGet(rowKey("dead_letters", id), err, d.Version)
	return d, err
}

// FindDeadLetter implements store.DeadLetterRows: the newest (by CreatedAt, then
// ID) entry with this source and ref; NotFound if none.
func (t *tx) FindDeadLetter(ctx context.Context, src dlq.Source, ref string) (dlq.DeadLetter, error) {
	what := "dead letter for " + string(src) + " " + quoted(ref)
	var (
		best  dlq.DeadLetter
		found bool
	)
	err := t.rows(ctx, "get "+what, yqlFindDeadLetter,
		newParams().text("$col_source", string(src)).text("$source_ref", ref),
		func(r query.Row) error {
			d, err := scanDeadLetter(r)
			if err != nil {
				return err
			}
			if !found || newerDeadLetter(d, best) {
				best, found = d, true
			}
			return nil
		})
	if err != nil {
		return dlq.DeadLetter{}, err
	}
	if !found {
		return dlq.DeadLetter{}, apperr.New(apperr.NotFound, "%s not found", what)
	}
	return best, nil
}

// newerDeadLetter orders FindDeadLetter's candidates: a later CreatedAt
// (the zero time the oldest), then the larger ID.
func newerDeadLetter(a, b dlq.DeadLetter) bool {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// UpdateDeadLetter implements store.DeadLetterRows: it stores d (with d.Version
// as given) if the stored version is expectedVersion; Conflict if not,
// NotFound if missing.
func (t *tx) UpdateDeadLetter(ctx context.Context, d dlq.DeadLetter, expectedVersion int64) error {
	return t.updateVersioned(ctx, rowKey("dead_letters", d.ID), "dead letter "+quoted(d.ID), expectedVersion, d.Version,
		yqlDeadLetterVersion, idParam(d.ID), yqlUpsertDeadLetter, deadLetterParams(d))
}

// DeleteDeadLetter implements store.DeadLetterRows; deleting a missing entry is
// not an error.
func (t *tx) DeleteDeadLetter(ctx context.Context, id string) error {
	return t.exec(ctx, "delete dead letter", yqlDeleteDeadLetter, idParam(id))
}

// ListDeadLetters implements store.DeadLetterRows with keyset pagination on
// (last_failed_at desc, id desc), a zero LastFailedAt last. p.Limit <= 0
// means 50, and it is capped at 1000. The cursor is opaque (the same format
// as sqlitestore's); a malformed cursor is Invalid. The query is the one
// text of the filter's shape (deadLetterListYQL).
func (t *tx) ListDeadLetters(ctx context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	limit = min(limit, maxPageLimit)
	yql, ps, err := deadLetterListQuery(f, p.Cursor, limit+1) // one extra row: is there a next page?
	if err != nil || yql == "" {
		return nil, "", err
	}
	var out []dlq.DeadLetter
	err = t.rows(ctx, "list dead letters", yql, ps, func(r query.Row) error {
		d, err := scanDeadLetter(r)
		out = append(out, d)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	slices.SortFunc(out, func(a, b dlq.DeadLetter) int {
		if a.LastFailedAt.IsZero() != b.LastFailedAt.IsZero() {
			if a.LastFailedAt.IsZero() {
				return 1
			}
			return -1
		}
		if c := b.LastFailedAt.Compare(a.LastFailedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, encodeCursor(last.LastFailedAt, last.ID), nil
}

// cursorKind is where a page cursor points: nowhere (the first page), after
// an entry with a LastFailedAt, or after one without (the NULL tail, listed
// after every dated entry).
type cursorKind int

const (
	noCursor cursorKind = iota
	afterDated
	afterUndated
)

// deadLetterShape is which filters a dead-letter list has set: the input
// of deadLetterListYQL, so its whole domain (2^8 x 3 shapes) can be, and is,
// enumerated by the package's tests (allDeadLetterShapes).
type deadLetterShape struct {
	status, source, errorType, orderID, sagaID, from, to, flagged bool
	cursor                                                        cursorKind
}

func shapeOf(f dlq.Filter, cursor cursorKind) deadLetterShape {
	return deadLetterShape{status: f.Status != "", source: f.Source != "", errorType: f.ErrorType != "",
		orderID: f.OrderID != "", sagaID: f.SagaID != "", from: !f.From.IsZero(), to: !f.To.IsZero(),
		flagged: f.Flagged != nil, cursor: cursor}
}

// deadLetterListYQL returns the one query text of a filter shape, built from
// fixed fragments (no "$x IS NULL OR" filter, no ORDER BY
// expression). It reads idx_status_last_failed (status, last_failed_at)
// with a status, idx_last_failed (last_failed_at) without, in two branches:
//
//   - dated: the key range last_failed_at >= From (or the epoch: every
//     non-NULL time) and < To, and, after a dated cursor entry, <=
//     $after_at, read backwards in index order (ORDER BY last_failed_at
//     DESC, id DESC, the index's columns) with LIMIT. The cursor's ties are
//     the one residual key condition: (last_failed_at < $after_at OR id <
//     $after_id) skips only the entries at exactly $after_at already shown.
//     Left out after an undated cursor entry (every dated one came before).
//   - undated: the point prefix last_failed_at IS NULL (the zero time:
//     oldest, so it passes any To bound and fails any From bound), after an
//     undated cursor entry id < $after_id, ORDER BY id DESC, LIMIT. Left
//     out with a From bound.
//
// The other filters (source, error type, order, saga, flagged) are
// equality conditions on columns outside the index: a branch reads until
// LIMIT rows match (docs/ydb.md, "Rows read"). "" means no branch is left
// (From with an undated cursor): the page is empty.
func deadLetterListYQL(s deadLetterShape) string {
	var decl, prefix, rest strings.Builder
	view := "idx_last_failed"
	if s.status {
		view = "idx_status_last_failed"
		decl.WriteString("DECLARE $status AS Utf8;\n")
		prefix.WriteString("status = $status AND ")
	}
	for _, c := range []struct {
		set             bool
		param, typ, col string
	}{
		{s.source, "$col_source", "Utf8", "`source`"},
		{s.errorType, "$error_type", "Utf8", "error_type"},
		{s.orderID, "$order_id", "Utf8", "order_id"},
		{s.sagaID, "$saga_id", "Utf8", "saga_id"},
		{s.flagged, "$flagged", "Bool", "flagged"},
	} {
		if c.set {
			decl.WriteString("DECLARE " + c.param + " AS " + c.typ + ";\n")
			rest.WriteString(" AND " + c.col + " = " + c.param)
		}
	}
	from := "$epoch"
	if s.from {
		from = "$from"
	}
	var branches []string
	if s.cursor != afterUndated {
		decl.WriteString("DECLARE " + from + " AS Timestamp;\n")
		w := prefix.String() + "last_failed_at >= " + from
		if s.to {
			decl.WriteString("DECLARE $to AS Timestamp;\n")
			w += " AND last_failed_at < $to"
		}
		if s.cursor == afterDated {
			decl.WriteString("DECLARE $after_at AS Timestamp;\nDECLARE $after_id AS Utf8;\n")
			w += " AND last_failed_at <= $after_at AND (last_failed_at < $after_at OR id < $after_id)"
		}
		branches = append(branches, "$dated = SELECT "+deadLetterColumns+" FROM dead_letters VIEW "+view+
			"\nWHERE "+w+rest.String()+"\nORDER BY last_failed_at DESC, id DESC LIMIT $limit;\n")
	}
	if !s.from {
		w := prefix.String() + "last_failed_at IS NULL"
		if s.cursor == afterUndated {
			decl.WriteString("DECLARE $after_id AS Utf8;\n")
			w += " AND id < $after_id"
		}
		branches = append(branches, "$undated = SELECT "+deadLetterColumns+" FROM dead_letters VIEW "+view+
			"\nWHERE "+w+rest.String()+"\nORDER BY id DESC LIMIT $limit;\n")
	}
	if len(branches) == 0 {
		return ""
	}
	decl.WriteString("DECLARE $limit AS Uint64;\n")
	q := "\n" + decl.String() + strings.Join(branches, "")
	if len(branches) == 2 {
		return q + "SELECT * FROM $dated UNION ALL SELECT * FROM $undated;"
	}
	return q + "SELECT * FROM " + strings.Fields(branches[0])[0] + ";"
}

// deadLetterListQuery picks the list query for f and binds its parameters;
// "" (and no error) when the page is empty by construction.
func deadLetterListQuery(f dlq.Filter, cursor string, limit int) (string, *paramList, error) {
	ps := newParams()
	kind, at, afterID := noCursor, time.Time{}, ""
	if cursor != "" {
		var err error
		if at, afterID, err = decodeCursor(cursor); err != nil {
			return "", nil, err
		}
		kind = afterDated
		if at.IsZero() {
			kind = afterUndated
		}
	}
	s := shapeOf(f, kind)
	yql := deadLetterListYQL(s)
	for _, b := range []struct {
		name string
		t    time.Time
	}{{"$from", f.From}, {"$to", f.To}} {
		if err := checkTimestamp(b.name, b.t); !b.t.IsZero() && err != nil {
			return "", nil, apperr.Wrap(apperr.Invalid, err, "ydbstore: list dead letters")
		}
	}
	if s.status {
		ps.text("$status", string(f.Status))
	}
	if s.source {
		ps.text("$col_source", string(f.Source))
	}
	if s.errorType {
		ps.text("$error_type", f.ErrorType)
	}
	if s.orderID {
		ps.text("$order_id", f.OrderID)
	}
	if s.sagaID {
		ps.text("$saga_id", f.SagaID)
	}
	if s.flagged {
		ps.bool("$flagged", *f.Flagged)
	}
	if kind != afterUndated {
		if s.from {
			ps.ts("$from", f.From)
		} else {
			ps.ts("$epoch", time.Unix(0, 0))
		}
		if s.to {
			ps.ts("$to", f.To)
		}
	}
	switch kind {
	case afterDated:
		ps.ts("$after_at", at).text("$after_id", afterID)
	case afterUndated:
		if !s.from {
			ps.text("$after_id", afterID)
		}
	}
	ps.uint("$limit", uint64(limit))
	if ps.err != nil {
		return "", nil, apperr.Wrap(apperr.Invalid, ps.err, "ydbstore: list dead letters")
	}
	if yql == "" {
		return "", nil, nil
	}
	return yql, ps, nil
}
