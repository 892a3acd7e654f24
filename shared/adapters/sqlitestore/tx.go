package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// tx implements store.Tx over one *sql.Tx. The table methods live in one file
// per table (orders.go, sagas.go, ...), each holding all of its table's SQL.
type tx struct {
	tx    *sql.Tx
	stmts *stmtCache
	// detach: the transaction is a group's (group.go): statements are
	// never interrupted (see stmtCtx).
	detach bool
	// writes counts the statements that may have written (an Exec that
	// failed or changed a row, and every statement another adapter runs
	// through store.SQLTx): a group member that fails after one needs its
	// writes undone (group.go).
	writes int
}

var _ store.Tx = (*tx)(nil)

// insert runs an INSERT; a duplicate primary key becomes Conflict.
func (t *tx) insert(ctx context.Context, what, query string, args ...any) error {
	_, err := t.execContext(ctx, query, args...)
	return classify(ctx, err, "sqlitestore: insert %s", what)
}

// exec runs a statement and returns the number of rows it changed.
func (t *tx) exec(ctx context.Context, what, query string, args ...any) (int, error) {
	res, err := t.execContext(ctx, query, args...)
	if err != nil {
		return 0, classify(ctx, err, "sqlitestore: %s", what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, classify(ctx, err, "sqlitestore: %s", what)
	}
	return int(n), nil
}

// updateVersioned runs a conditional UPDATE whose WHERE clause checks the
// version. When it changes no row, existsQuery (selecting the row by key with
// keyArgs) tells a stale version (Conflict) from a missing row (NotFound).
func (t *tx) updateVersioned(ctx context.Context, what string, expectedVersion int64,
	query string, args []any, existsQuery string, keyArgs ...any) error {
	n, err := t.exec(ctx, "update "+what, query, args...)
	if err != nil || n > 0 {
		return err
	}
	var one int
	err = t.queryRowContext(ctx, existsQuery, keyArgs...).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return apperr.New(apperr.NotFound, "%s not found", what)
	case err != nil:
		return classify(ctx, err, "sqlitestore: update %s", what)
	}
	return apperr.New(apperr.Conflict, "%s: stored version is not %d", what, expectedVersion)
}

// getErr translates the error of a single-row read: no row is NotFound.
func getErr(ctx context.Context, err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return apperr.Wrap(apperr.NotFound, err, "%s not found", what)
	}
	return classify(ctx, err, "sqlitestore: get %s", what)
}

// queryAll runs a query and calls scan for each row.
func (t *tx) queryAll(ctx context.Context, what, query string, args []any, scan func(rowScanner) error) error {
	rows, err := t.queryContext(ctx, query, args...)
	if err != nil {
		return classify(ctx, err, "sqlitestore: %s", what)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return classify(ctx, err, "sqlitestore: %s", what)
		}
	}
	return classify(ctx, rows.Err(), "sqlitestore: %s", what)
}

// placeholders returns "?, ?, ..." with n marks.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	b := make([]byte, 0, 3*n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '?')
	}
	return string(b)
}

// quoted returns a caller-safe rendering of a key for messages.
func quoted(s string) string { return fmt.Sprintf("%q", s) }

// sprintfSQL fills a query template's %s slots with generated SQL fragments
// (placeholder lists only, never values).
func sprintfSQL(template string, fragments ...any) string {
	return fmt.Sprintf(template, fragments...)
}
