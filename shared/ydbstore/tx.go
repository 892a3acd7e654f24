package ydbstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/apperr"
	"ordersaga/shared/store"
)

// tx implements store.Tx over one query-service transaction. The table
// methods live in one file per table (orders.go, sagas.go, ...), each
// holding all of its table's YQL.
type tx struct {
	c   conn
	cfg *Config
}

var _ store.Tx = (*tx)(nil)

// conn is the part of a query-service transaction the table methods use.
// sdkConn is the real one; unit tests substitute a recorder that checks
// every statement against the schema and its DECLAREs against the bound
// parameters.
type conn interface {
	// exec runs a statement that returns no rows.
	exec(ctx context.Context, yql string, p ydb.Params) error
	// queryRow runs a query returning at most one row; query.ErrNoRows if none.
	queryRow(ctx context.Context, yql string, p ydb.Params) (query.Row, error)
	// each runs a query returning one result set and calls fn per row,
	// stopping at fn's first error (returned as is).
	each(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error
}

// sdkConn is conn over the SDK's transaction.
type sdkConn struct{ tx query.TxActor }

func (c sdkConn) exec(ctx context.Context, yql string, p ydb.Params) error {
	return c.tx.Exec(ctx, yql, query.WithParameters(p))
}

func (c sdkConn) queryRow(ctx context.Context, yql string, p ydb.Params) (query.Row, error) {
	return c.tx.QueryRow(ctx, yql, query.WithParameters(p))
}

func (c sdkConn) each(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) (err error) {
	rs, err := c.tx.QueryResultSet(ctx, yql, query.WithParameters(p))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rs.Close(ctx); err == nil {
			err = cerr
		}
	}()
	for r, rerr := range rs.Rows(ctx) {
		if rerr != nil {
			return rerr
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// exec runs a statement that returns no rows.
func (t *tx) exec(ctx context.Context, what, yql string, ps *paramList) error {
	p, err := ps.build()
	if err != nil {
		return err
	}
	return classify(ctx, retryableBeforeCommit(ctx, t.c.exec(ctx, yql, p)), "ydbstore: %s", what)
}

// row runs a query returning at most one row and scans it with scan.
// found is false (and err nil) when there is no row.
func (t *tx) row(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error) (found bool, err error) {
	p, err := ps.build()
	if err != nil {
		return false, err
	}
	r, err := t.c.queryRow(ctx, yql, p)
	if errors.Is(err, query.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(ctx, retryableBeforeCommit(ctx, err), "ydbstore: %s", what)
	}
	if err := scan(r); err != nil {
		return false, scanErr(err, what)
	}
	return true, nil
}

// rows runs a query returning one result set and calls scan for each row.
func (t *tx) rows(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error) error {
	p, err := ps.build()
	if err != nil {
		return err
	}
	var scanFail error
	err = t.c.each(ctx, yql, p, func(r query.Row) error {
		if err := scan(r); err != nil {
			scanFail = scanErr(err, what)
			return scanFail
		}
		return nil
	})
	if scanFail != nil {
		return scanFail
	}
	return classify(ctx, retryableBeforeCommit(ctx, err), "ydbstore: %s", what)
}

// get runs a single-row read; no row is NotFound (naming what).
func (t *tx) get(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error) error {
	found, err := t.row(ctx, "get "+what, yql, ps, scan)
	if err != nil {
		return err
	}
	if !found {
		return apperr.New(apperr.NotFound, "%s not found", what)
	}
	return nil
}

// insert implements the Insert* methods: existsYQL (selecting the row by its
// key with keyPs) must find nothing, else Conflict; then insertYQL runs.
// Reading first keeps the transaction usable after a Conflict; the INSERT's
// own PRECONDITION_FAILED (a race the serializable read makes unlikely) is
// classified as Conflict too.
func (t *tx) insert(ctx context.Context, what, existsYQL string, keyPs *paramList, insertYQL string, ps *paramList) error {
	if ps.err != nil { // a value YDB cannot store fails before any statement runs
		return ps.err
	}
	found, err := t.row(ctx, "check "+what, existsYQL, keyPs, func(query.Row) error { return nil })
	if err != nil {
		return err
	}
	if found {
		return apperr.New(apperr.Conflict, "%s already exists", what)
	}
	return t.exec(ctx, "insert "+what, insertYQL, ps)
}

// updateVersioned implements the Update* methods: versionYQL (selecting the
// column version of the row by key) must find the row (else NotFound) with
// version expected (else Conflict); then upsertYQL overwrites the row.
func (t *tx) updateVersioned(ctx context.Context, what string, expected int64,
	versionYQL string, keyPs *paramList, upsertYQL string, ps *paramList) error {
	if ps.err != nil {
		return ps.err
	}
	var version int64
	found, err := t.row(ctx, "read version of "+what, versionYQL, keyPs, func(r query.Row) error {
		return r.ScanNamed(query.Named("version", &version))
	})
	if err != nil {
		return err
	}
	if !found {
		return apperr.New(apperr.NotFound, "%s not found", what)
	}
	if version != expected {
		return apperr.New(apperr.Conflict, "%s: stored version is %d, not %d", what, version, expected)
	}
	return t.exec(ctx, "update "+what, upsertYQL, ps)
}

// scanErr classifies a failure to decode a row: a schema/code mismatch.
func scanErr(err error, what string) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	return apperr.Wrap(apperr.Internal, err, "ydbstore: %s: decode row", what)
}

// quoted returns a caller-safe rendering of a key for messages.
func quoted(s string) string { return fmt.Sprintf("%q", s) }
