package sqlitestore

import (
	"context"
	"database/sql"
	"sync"

	"ordersaga/shared/domain/store"
)

// stmtCache keeps one prepared statement per query text and pool, so a
// transaction reuses the *sql.Stmt already prepared on its connection.
//
// What it does not save: modernc.org/sqlite (v1.38) keeps only the SQL text
// in its driver statement and compiles it again on every execution (its
// stmt.exec and stmt.query call sqlite3_prepare_v2 each time), so SQL
// compilation stays about a fifth of the store's CPU in the scripts/bench
// burst whether or not a statement is "prepared". The cache saves
// database/sql's per-call work only.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	missing []string
}

// maxCached bounds the cache: generated statements (IN lists of varying
// length) must not grow it without limit; past it, queries run unprepared.
const maxCached = 256

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// get returns the prepared statement for query, or nil when it is not
// prepared yet. It never prepares: inside a transaction the pool's only
// writer connection is taken, so preparing on the pool would wait for it
// forever. Missing queries are noted and prepared by prepareMissing once the
// transaction has ended.
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[query]
	if !ok && len(c.m) < maxCached {
		c.m[query] = nil // noted: prepare after the transaction
		c.missing = append(c.missing, query)
	}
	return st
}

// prepareMissing prepares the noted queries. Call it with no transaction
// open by this goroutine. The lock is not held while preparing: preparing
// waits for the writer connection, whose holder may be waiting in get. A
// query that fails to prepare stays unprepared (it then runs as before: a
// failure here only costs speed).
func (c *stmtCache) prepareMissing(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	missing := c.missing
	c.missing = nil
	c.mu.Unlock()
	for _, q := range missing {
		p, err := c.db.PrepareContext(ctx, q)
		c.mu.Lock()
		switch {
		case err != nil:
			delete(c.m, q)
		case c.m[q] == nil:
			c.m[q] = p
			p = nil
		}
		c.mu.Unlock()
		if p != nil {
			_ = p.Close() // another goroutine prepared it first
		}
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		if st != nil {
			_ = st.Close()
		}
		delete(c.m, q)
	}
}

// The tx's query helpers run through the cache.

var _ store.SQLTx = (*tx)(nil)

// SQLDB implements store.SQLTx: the pool the transaction runs on.
func (t *tx) SQLDB() *sql.DB { return t.stmts.db }

// ExecContext implements store.SQLTx (for the embedded queue's tables). The
// statement counts as a write whatever it changed (group.go): the store
// cannot tell what another adapter's SQL does.
func (t *tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.writes++
	return t.execContext(ctx, query, args...)
}

// QueryRowContext implements store.SQLTx. The statement counts as a write
// (group.go): the store cannot tell what another adapter's SQL does.
func (t *tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	t.writes++
	return t.queryRowContext(ctx, query, args...)
}

func (t *tx) execContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	args, err := textArgs(args)
	if err != nil {
		return nil, err
	}
	ctx = t.stmtCtx(ctx)
	var res sql.Result
	if st := t.stmts.get(query); st != nil {
		res, err = t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	} else {
		res, err = t.tx.ExecContext(ctx, query, args...)
	}
	// A statement that failed (it may have written part of its rows: OR
	// FAIL) or changed a row is a write (group.go); the store's statements
	// are all DML, so one that changed no row wrote nothing.
	if err != nil {
		t.writes++
	} else if n, rerr := res.RowsAffected(); rerr != nil || n > 0 {
		t.writes++
	}
	return res, err
}

func (t *tx) queryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.stmtCtx(ctx)
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t *tx) queryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.stmtCtx(ctx)
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// stmtCtx is the context a statement runs with. In a group transaction
// (group.go) a statement must not be interrupted once it runs, so a live
// context loses its cancellation; an ended one is passed on, and
// database/sql then fails the statement before it reaches SQLite.
func (t *tx) stmtCtx(ctx context.Context) context.Context {
	if !t.detach || ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// note marks a diagnostic text argument (an error text, a reason): it is
// repaired rather than refused when it is not valid UTF-8 (store.RepairText).
type note string

// textArgs applies the port's text rule to a write's arguments: notes are
// repaired, any other string that is not valid UTF-8 is Invalid (SQLite
// would store the bytes, YDB cannot; the adapters must agree).
func textArgs(args []any) ([]any, error) {
	for i, a := range args {
		switch v := a.(type) {
		case note:
			args[i] = store.RepairText(string(v))
		case string:
			if err := store.CheckText("sqlitestore: text value", v); err != nil {
				return nil, err
			}
		}
	}
	return args, nil
}
