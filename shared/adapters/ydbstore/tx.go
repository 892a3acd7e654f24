package ydbstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// tx implements store.Tx over one query-service transaction. The table
// methods live in one file per table (orders.go, sagas.go, ...), each
// holding all of its table's YQL.
type tx struct {
	c   Conn
	cfg *Config
	// immediate sends every write at once, after a key or version read
	// (Config.ImmediateWrites, and the rerun after an optimistic attempt
	// failed at its commit). Otherwise writes are deferred (see flush).
	immediate bool
	readOnly  bool
	// seen holds what this transaction read of a row, by rowKey: its
	// version, or absent. Serializable: a row read here cannot change
	// before the commit without aborting it, so a write checked against
	// seen needs no second read.
	seen map[string]int64
	// pending are the deferred writes, sent as one multi-statement query
	// before the next read of a table they touch, or with the commit.
	pending []write
	// ran: a statement was sent; committed: one carried the commit.
	ran, committed bool
	// txReads counts the reads sent in the transaction.
	txReads int
}

// absent marks a row seen missing.
const absent = int64(-1)

// write is one deferred statement group: a yql const (or a guard plus a
// const) and its parameters.
type write struct {
	what   string
	yql    string
	ps     *paramList
	tables []string
}

// rowKey names a row for tx.seen.
func rowKey(table string, key ...string) string {
	return table + "\x00" + strings.Join(key, "\x00")
}

func (t *tx) saw(key string, version int64) {
	if t.seen == nil {
		t.seen = map[string]int64{}
	}
	t.seen[key] = version
}

var _ store.Tx = (*tx)(nil)

// Conn is what a transaction sends to YDB. sdkConn is the real one (one
// query-service transaction); RunOffline takes another (package ydbtrips
// counts round trips with it, and the package's tests check every statement
// against the schema and its DECLAREs against the bound parameters).
type Conn interface {
	// Exec runs a statement that returns no rows (or whose rows are
	// discarded); commit sends the commit with it (query.WithCommit), so
	// the transaction ends with this round trip.
	Exec(ctx context.Context, yql string, p ydb.Params, commit bool) error
	// QueryRow runs a query returning at most one row; query.ErrNoRows if none.
	QueryRow(ctx context.Context, yql string, p ydb.Params) (query.Row, error)
	// Each runs a query returning one result set and calls fn per row,
	// stopping at fn's first error (returned as is).
	Each(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error
	// Snapshot runs a read-only query outside the transaction, in a
	// snapshot read-only transaction of its own that this one request
	// begins and commits (query.SnapshotReadOnlyTxControl): it takes no
	// locks in the caller's transaction.
	Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error
}

// sdkConn is Conn over the SDK's transaction (and, for Snapshot, the
// driver's query client).
type sdkConn struct {
	tx query.TxActor
	qc query.Client
}

func (c sdkConn) Exec(ctx context.Context, yql string, p ydb.Params, commit bool) error {
	if commit {
		// internal/query/transaction.go (v3.127.4): an Exec whose
		// TxControl commits marks the transaction completed, and the
		// CommitTx that DoTx calls afterwards is then a no-op.
		return c.tx.Exec(ctx, yql, query.WithParameters(p), query.WithCommit())
	}
	return c.tx.Exec(ctx, yql, query.WithParameters(p))
}

func (c sdkConn) QueryRow(ctx context.Context, yql string, p ydb.Params) (query.Row, error) {
	return c.tx.QueryRow(ctx, yql, query.WithParameters(p))
}

func (c sdkConn) Each(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) (err error) {
	rs, err := c.tx.QueryResultSet(ctx, yql, query.WithParameters(p))
	if err != nil {
		return err
	}
	return eachRow(ctx, rs, fn)
}

func (c sdkConn) Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	// query/transaction.go (v3.127.4): SnapshotReadOnlyTxControl is
	// BeginTx(WithSnapshotReadOnly()) plus CommitTx(): one request.
	rs, err := c.qc.QueryResultSet(ctx, yql, query.WithParameters(p),
		query.WithTxControl(query.SnapshotReadOnlyTxControl()), query.WithIdempotent())
	if err != nil {
		return err
	}
	return eachRow(ctx, rs, fn)
}

func eachRow(ctx context.Context, rs query.ClosableResultSet, fn func(query.Row) error) (err error) {
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

// exec runs a write: at once in immediate mode, else deferred to the next
// flush (its errors then surface there, or at the commit).
func (t *tx) exec(ctx context.Context, what, yql string, ps *paramList) error {
	if ps.err != nil { // a value YDB cannot store fails before any statement runs
		return ps.err
	}
	if t.immediate || t.readOnly {
		return t.execNow(ctx, what, yql, ps, false)
	}
	t.pending = append(t.pending, write{what: what, yql: yql, ps: ps, tables: tablesOf(yql)})
	return nil
}

func (t *tx) execNow(ctx context.Context, what, yql string, ps *paramList, commit bool) error {
	p, err := ps.build()
	if err != nil {
		return err
	}
	t.ran = true
	return classify(ctx, retryableBeforeCommit(ctx, t.c.Exec(ctx, yql, p, false)), "ydbstore: %s", what)
}

// flush sends the deferred writes as one multi-statement query (with the
// commit when commit is set). A precondition that fails there (an INSERT
// on an existing key: issue 2012; a version guard: guardMarker) makes the
// whole optimistic attempt void: errOptimisticMiss, and InTx reruns the
// closure in immediate mode, where each write is checked as it is made.
func (t *tx) flush(ctx context.Context, commit bool) error {
	if len(t.pending) == 0 {
		return nil
	}
	yql, ps, what, err := joinWrites(t.pending)
	t.pending = nil
	if err != nil {
		return err
	}
	p, err := ps.build()
	if err != nil {
		return err
	}
	t.ran = true
	err = t.c.Exec(ctx, yql, p, commit)
	if commit {
		t.committed = true
	}
	switch {
	case err == nil:
		return nil
	case optimisticMiss(err):
		return errOptimisticMiss
	case commit:
		// A failed commit is never rerun here: its outcome may be unknown.
		return classify(ctx, err, "ydbstore: %s", what)
	}
	return classify(ctx, retryableBeforeCommit(ctx, err), "ydbstore: %s", what)
}

// finish ends a successful closure: the deferred writes go with the commit.
func (t *tx) finish(ctx context.Context) error {
	return t.flush(ctx, !t.readOnly)
}

// beforeRead flushes the deferred writes when the read touches one of
// their tables, so the transaction reads its own writes.
func (t *tx) beforeRead(ctx context.Context, yql string) error {
	if len(t.pending) == 0 {
		return nil
	}
	for _, tb := range tablesOf(yql) {
		for _, w := range t.pending {
			if slices.Contains(w.tables, tb) {
				return t.flush(ctx, false)
			}
		}
	}
	return nil
}

// row runs a query returning at most one row and scans it with scan.
// found is false (and err nil) when there is no row.
func (t *tx) row(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error) (found bool, err error) {
	p, err := ps.build()
	if err != nil {
		return false, err
	}
	if err := t.beforeRead(ctx, yql); err != nil {
		return false, err
	}
	t.ran = true
	t.txReads++
	r, err := t.c.QueryRow(ctx, yql, p)
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
	return t.scanAll(ctx, what, yql, ps, scan, false)
}

// snapshotRows is rows outside the transaction (Conn.Snapshot): for the
// relay's candidate list, whose rows are then claimed by version.
func (t *tx) snapshotRows(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error) error {
	return t.scanAll(ctx, what, yql, ps, scan, true)
}

func (t *tx) scanAll(ctx context.Context, what, yql string, ps *paramList, scan func(query.Row) error, snapshot bool) error {
	p, err := ps.build()
	if err != nil {
		return err
	}
	var scanFail error
	each := func(r query.Row) error {
		if err := scan(r); err != nil {
			scanFail = scanErr(err, what)
			return scanFail
		}
		return nil
	}
	if snapshot {
		err = t.c.Snapshot(ctx, yql, p, each)
	} else {
		if err := t.beforeRead(ctx, yql); err != nil {
			return err
		}
		t.ran = true
		t.txReads++
		err = t.c.Each(ctx, yql, p, each)
	}
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

// sawGet remembers what a Get* of a versioned row read (its version, or
// absent) for a later Insert* or Update* of the row in this transaction.
func (t *tx) sawGet(key string, err error, version int64) {
	switch {
	case err == nil:
		t.saw(key, version)
	case apperr.Is(err, apperr.NotFound):
		t.saw(key, absent)
	}
}

// insert implements the Insert* methods. Deferred (the default): the INSERT
// is sent with the next flush and fails there on an existing key (issue
// 2012), which voids the attempt (errOptimisticMiss) and reruns the closure
// in immediate mode. Immediate: existsYQL (selecting the row by its key
// with keyPs) must find nothing, else Conflict, which keeps the
// transaction usable; it is skipped when this transaction already saw the
// row absent. key is the row's rowKey.
func (t *tx) insert(ctx context.Context, key, what string, version int64, existsYQL string, keyPs *paramList, insertYQL string, ps *paramList) error {
	if ps.err != nil { // a value YDB cannot store fails before any statement runs
		return ps.err
	}
	if v, ok := t.seen[key]; ok && v != absent {
		return apperr.New(apperr.Conflict, "%s already exists", what)
	}
	if v, ok := t.seen[key]; t.immediate && !(ok && v == absent) {
		found, err := t.row(ctx, "check "+what, existsYQL, keyPs, func(query.Row) error { return nil })
		if err != nil {
			return err
		}
		if found {
			return apperr.New(apperr.Conflict, "%s already exists", what)
		}
	}
	if err := t.exec(ctx, "insert "+what, insertYQL, ps); err != nil {
		return err
	}
	t.saw(key, version) // inserted: the row now exists at the caller's version
	return nil
}

// updateVersioned implements the Update* methods: the row must exist (else
// NotFound) with version expected (else Conflict), then upsertYQL
// overwrites it. When this transaction read the row, that read decides at
// once and the UPSERT is deferred with no further read. Otherwise, in
// immediate mode versionYQL (selecting the column version by key) is read
// first; deferred, the UPSERT is sent behind a guard (guarded) that fails
// the whole query unless the stored version is expected.
func (t *tx) updateVersioned(ctx context.Context, key, what string, expected, newVersion int64,
	versionYQL string, keyPs *paramList, upsertYQL string, ps *paramList) error {
	if ps.err != nil {
		return ps.err
	}
	version, known := t.seen[key]
	if !known && t.immediate {
		found, err := t.row(ctx, "read version of "+what, versionYQL, keyPs, func(r query.Row) error {
			return r.ScanNamed(query.Named("version", &version))
		})
		if err != nil {
			return err
		}
		if !found {
			version = absent
		}
		known = true
	}
	if known {
		if version == absent {
			return apperr.New(apperr.NotFound, "%s not found", what)
		}
		if version != expected {
			return apperr.New(apperr.Conflict, "%s: stored version is %d, not %d", what, version, expected)
		}
		t.saw(key, newVersion)
		return t.exec(ctx, "update "+what, upsertYQL, ps)
	}
	t.saw(key, newVersion)
	return t.exec(ctx, "update "+what, guarded(versionYQL, upsertYQL), ps.int("$expected_version", expected))
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
