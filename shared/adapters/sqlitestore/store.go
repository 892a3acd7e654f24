// Package sqlitestore is the embedded SQLite adapter of the store port
// (package store), on modernc.org/sqlite (pure Go, driver name "sqlite").
// It runs ordersaga on a laptop and in tests.
//
// Concurrency model: the database is in WAL mode. Write transactions (InTx)
// run on one writer connection whose transactions BEGIN IMMEDIATE, so a
// writer takes the write lock before it reads anything and two writers never
// deadlock on a lock upgrade; writers of other processes queue on
// busy_timeout. Concurrent InTx calls of this process that wait for the
// writer run as one group transaction, each in its own savepoint, with one
// COMMIT (group.go); WAL checkpoints run on a connection of their own
// (checkpoint.go). Read transactions (View) run
// on a second pool with deferred BEGIN and PRAGMA query_only, so they read a
// consistent snapshot concurrently with the writer and any write inside them
// fails.
//
// Versions: Insert* stores the Version of the value it is given, and every
// Update* (and PutStock) stores the Version of the value it is given after
// checking that the stored version equals expectedVersion. The adapter never
// bumps a version itself: callers do (order.Transition does), so the value a
// caller holds after a successful write is exactly what is stored.
//
// Times are stored as INTEGER unix microseconds UTC (see codec.go); values
// come back in UTC truncated to the microsecond, and the zero time round-trips
// as the zero time.
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"ordersaga/schema"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/validate"
)

var _ store.Store = (*Store)(nil)

// Defaults of a Config's zero fields.
const (
	DefaultMaxOpenConns = 4
	DefaultBusyTimeout  = 10 * time.Second
)

// Config configures Open. Zero fields take the defaults named; negative
// ones are refused. The zero value is usable.
type Config struct {
	// Now is the clock (used to stamp applied migrations); default time.Now.
	Now func() time.Time
	// MaxOpenConns bounds the read pool (default DefaultMaxOpenConns). The
	// write pool always has exactly one connection.
	MaxOpenConns int
	// BusyTimeout is how long one statement waits for a lock held by another
	// connection before SQLITE_BUSY (default DefaultBusyTimeout).
	BusyTimeout time.Duration
	// OnTx, if set, is called once per InTx (readOnly=false) or View
	// (readOnly=true) call, not once per retry. Tests use it to count the
	// transactions a use case spends.
	OnTx func(readOnly bool)
	// OnCheckpoint, if set, is called after every background WAL
	// checkpoint (checkpoint.go) with the outcome SQLite reported: busy,
	// the frames in the log and the frames checkpointed.
	OnCheckpoint func(busy, logFrames, checkpointed int, err error)
}

// Validate reports what Open would refuse of c: a negative MaxOpenConns or
// BusyTimeout. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "MaxOpenConns", c.MaxOpenConns)
	validate.NotNegative(&p, "BusyTimeout", c.BusyTimeout)
	return p.Err("sqlitestore.Open")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	c.MaxOpenConns = cmp.Or(c.MaxOpenConns, DefaultMaxOpenConns)
	c.BusyTimeout = cmp.Or(c.BusyTimeout, DefaultBusyTimeout)
}

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	rw  *sql.DB // write pool: BEGIN IMMEDIATE
	ro  *sql.DB // read pool: deferred BEGIN, query_only
	cfg Config
	// Prepared statements per pool.
	rwStmts, roStmts *stmtCache
	// ckpt runs the WAL checkpoints off the writer (checkpoint.go).
	ckpt *checkpointer
	// w groups concurrent write transactions (group.go).
	w *writer
}

func (s *Store) cacheFor(db *sql.DB) *stmtCache {
	if db == s.rw {
		return s.rwStmts
	}
	return s.roStmts
}

// Open opens (creating if needed) the SQLite database file at path, applies
// the pending migrations of schema.SQLite, and returns the store. path is a
// plain file path; it must not contain '?'. cfg's zero fields take their
// defaults. Errors: Invalid for a bad path or a negative setting (naming the
// field), Internal when the file cannot be opened or a migration fails (the
// failed migration is rolled back and named in the error).
func Open(ctx context.Context, path string, cfg Config) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') || path == ":memory:" {
		return nil, apperr.New(apperr.Invalid, "sqlitestore: %q is not a database file path", path)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	busy := fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())

	// One writer connection: SQLite admits one writer at a time anyway, and
	// queueing writers in Go's pool is fair and immediate, whereas several
	// writer connections would contend in SQLite's busy handler, which sleeps
	// and polls (measured: p99 latency of POST /orders several times higher).
	rw, err := openPool(path, 1, "immediate",
		busy, "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)",
		fmt.Sprintf("wal_autocheckpoint(%d)", walAutocheckpointPages), "temp_store(MEMORY)")
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, rw, schema.SQLite, "sqlite", cfg.Now); err != nil {
		rw.Close()
		return nil, err
	}
	ro, err := openPool(path, cfg.MaxOpenConns, "",
		busy, "synchronous(NORMAL)", "foreign_keys(1)", "query_only(1)")
	if err != nil {
		rw.Close()
		return nil, err
	}
	ck, err := openPool(path, 1, "", busy, "synchronous(NORMAL)")
	if err != nil {
		ro.Close()
		rw.Close()
		return nil, err
	}
	return &Store{rw: rw, ro: ro, cfg: cfg, rwStmts: newStmtCache(rw), roStmts: newStmtCache(ro),
		ckpt: startCheckpointer(ck, cfg.OnCheckpoint), w: &writer{db: rw}}, nil
}

func openPool(path string, maxConns int, txlock string, pragmas ...string) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitestore: open %s", path)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	// Connect now so that a bad path or a bad pragma fails Open, not the first
	// transaction.
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitestore: open %s", path)
	}
	return db, nil
}

// DB returns the write pool, for an embedded component (the local queue) that
// keeps its own tables in the same file. Transactions begun on it are
// BEGIN IMMEDIATE.
func (s *Store) DB() *sql.DB { return s.rw }

// Close closes both pools. Transactions still running fail.
func (s *Store) Close() error {
	_ = s.ckpt.close()
	s.rwStmts.close()
	s.roStmts.close()
	err1 := s.ro.Close()
	err2 := s.rw.Close()
	if err1 != nil {
		return apperr.Wrap(apperr.Internal, err1, "sqlitestore: close")
	}
	return apperr.Wrap(apperr.Internal, err2, "sqlitestore: close")
}

// InTx implements store.Store. fn runs inside BEGIN IMMEDIATE; when SQLite
// reports the database busy or locked (after busy_timeout) the transaction is
// rolled back and fn runs again, up to maxAttempts times, then InTx returns
// Transient. Any other error from fn is returned unchanged after rollback; a
// panic in fn rolls back and propagates.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.cfg.OnTx != nil {
		s.cfg.OnTx(false)
	}
	return s.run(ctx, s.rw, false, fn)
}

// View implements store.Store: fn runs in a deferred (snapshot) transaction
// on a query_only connection, so any write fails with Internal.
func (s *Store) View(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.cfg.OnTx != nil {
		s.cfg.OnTx(true)
	}
	return s.run(ctx, s.ro, true, fn)
}
