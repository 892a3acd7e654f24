// Package ydbstore is the YDB adapter of the store port (package store), on
// ydb-go-sdk/v3's query service. It is ordersaga's production store; it
// must pass the same conformance suite (package storetest) as the SQLite
// adapter whenever a YDB server is reachable (see docs/ydb.md).
//
// One driver per function instance: a function opens the store once at
// cold start (package app keeps it for the instance's lifetime) and shares
// it between invocations; the driver holds the gRPC connections, discovery
// and the session pool, and is safe for concurrent use.
//
// Transactions: InTx runs its closure in a serializable read-write
// transaction through db.Query().DoTx, whose retryer runs the closure again
// (up to Config.MaxAttempts times) after ABORTED (optimistic-lock conflicts,
// "transaction locks invalidated"), UNAVAILABLE, OVERLOADED, BAD_SESSION and
// SESSION_BUSY. View runs a snapshot read-only transaction the same way (and
// also retries UNDETERMINED and SESSION_EXPIRED, reads being idempotent).
// Every closure first runs as a probe (probe.go): one that needs no
// transaction takes no session, and a View of one read is one request.
//
// Retries: besides what DoTx retries itself, a statement that fails with a
// status the SDK retries only for idempotent operations (transport
// Unavailable or Internal, UNDETERMINED, SESSION_EXPIRED: likely on the
// first call after a serverless instance wakes) is retried for InTx too,
// because no statement carries the commit: the failed transaction never
// committed (retryableBeforeCommit). A failed commit is never retried.
//
// Writes (deferred.go): writes are deferred and sent as one
// multi-statement query with the commit (or before a read of a table they
// touch). An INSERT fails there on an existing key (issue 2012); an
// update of a row not read in this transaction is guarded by an Ensure on
// its stored version. Either failure reruns the closure once with
// immediate checks (Config.ImmediateWrites): Insert* reads the key first
// (Conflict keeps the transaction usable), Update* reads the version
// (NotFound / Conflict), then writes. A version or absence read by Get*
// in the transaction is remembered, so no second read is needed. The
// adapter never bumps versions itself.
//
// Every query is a named const beginning with "yql", in the file of its
// table (orders.go, idempotency.go, ...), with DECLAREd parameters bound
// through ydb.ParamsBuilder; no value is ever formatted into YQL text.
//
// Types: keys Utf8, integers Int64, times Optional<Timestamp> with NULL for
// the zero time.Time (times come back in UTC, truncated to the microsecond;
// non-zero times outside 1970..2105 are Invalid), encoded lists and maps
// Json, opaque payloads String (see schema/ydb/0001_orders.sql).
package ydbstore

import (
	"context"
	"errors"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

var _ store.Store = (*Store)(nil)

// closeTimeout bounds Close.
const closeTimeout = 10 * time.Second

// Store is the YDB store. It is safe for concurrent use.
type Store struct {
	db    *ydb.Driver
	cfg   Config
	views *viewShapes // probe.go
}

// Open validates cfg, connects to the database and returns the store. It
// does not create or migrate tables (see Migrate and scripts/migrate).
// Errors: Invalid for a bad configuration; Transient when the database
// cannot be reached within cfg.DialTimeout; Internal otherwise.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	db, err := ydb.Open(ctx, cfg.ConnectionString, cfg.driverOptions()...)
	if err != nil {
		return nil, classify(ctx, err, "ydbstore: open %s", redactDSN(cfg.ConnectionString))
	}
	return &Store{db: db, cfg: cfg, views: &viewShapes{}}, nil
}

// Close closes the driver; transactions still running fail.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := s.db.Close(ctx); err != nil {
		return apperr.Wrap(apperr.Internal, err, "ydbstore: close")
	}
	return nil
}

// InTx implements store.Store: fn runs in a serializable read-write
// transaction, committed if fn returns nil. On a retryable status (from a
// statement inside fn or from the commit) the transaction is rolled back and
// fn runs again, up to Config.MaxAttempts times or until ctx ends, then
// InTx returns Transient. An error of fn's own comes back unchanged after
// rollback. Pass a ctx with a deadline.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.cfg.OnTx != nil {
		s.cfg.OnTx(false)
	}
	return s.run(ctx, false, fn)
}

// View implements store.Store: fn runs in a snapshot read-only transaction
// (one consistent snapshot for all its reads); writes inside fn fail
// (Internal).
func (s *Store) View(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.cfg.OnTx != nil {
		s.cfg.OnTx(true)
	}
	return s.run(ctx, true, fn)
}

// run executes fn through DoTx: first with deferred writes; if a deferred
// precondition failed at the flush (errOptimisticMiss: nothing was
// committed) once more with immediate checks, so Conflict and NotFound
// reach the closure at the call that caused them.
//
// Both runs share one budget of Config.MaxAttempts runs of the closure
// (the rerun takes one), so a transaction never runs more than MaxAttempts
// times in all.
func (s *Store) run(ctx context.Context, readOnly bool, fn func(context.Context, store.Tx) error) error {
	b := newAttemptBudget(s.cfg.MaxAttempts)
	err := s.runOnce(ctx, readOnly, s.cfg.ImmediateWrites, fn, b)
	if errors.Is(err, errOptimisticMiss) {
		if berr := b.Acquire(ctx); berr != nil {
			return classify(ctx, berr, "ydbstore: transaction")
		}
		err = s.runOnce(ctx, readOnly, true, fn, b)
	}
	return err
}

func (s *Store) runOnce(ctx context.Context, readOnly, immediate bool, fn func(context.Context, store.Tx) error, b *attemptBudget) error {
	settings := query.TxSettings(query.WithSerializableReadWrite())
	if readOnly {
		settings = query.TxSettings(query.WithSnapshotReadOnly())
	}
	opts := []query.DoTxOption{
		query.WithTxSettings(settings),
		// Lazy: no BeginTransaction RPC; the first statement begins the
		// transaction through its TxControl (internal/query/transaction.go
		// txControl, ydb-go-sdk v3.127.4), and a closure that runs no
		// statement costs no round trip at all (CommitTx of a lazy tx is a
		// no-op).
		query.WithLazyTx(true),
		query.WithRetryBudget(b),
	}
	if readOnly {
		// Only reads: rerunning after an unknown outcome is harmless.
		opts = append(opts, query.WithIdempotent())
	}
	// The probe (probe.go): a closure that needs no transaction takes no
	// session.
	probe := &probeConn{snap: sdkConn{qc: s.db.Query()}.Snapshot, readOnly: readOnly, views: s.views}
	pt := &tx{c: probe, cfg: &s.cfg, immediate: immediate, readOnly: readOnly}
	if err := fn(ctx, pt); probe.done(pt) {
		return err
	}
	reads := probe.reads
	var fnErr error
	err := s.db.Query().DoTx(ctx, func(ctx context.Context, qtx query.TxActor) error {
		c := &replayConn{Conn: sdkConn{tx: qtx, qc: s.db.Query()}, reads: reads}
		reads = nil // a retry reads afresh
		fnErr = runClosure(ctx, &tx{c: c, cfg: &s.cfg, immediate: immediate, readOnly: readOnly}, fn)
		return fnErr
	}, opts...)
	if errors.Is(fnErr, errOptimisticMiss) {
		return errOptimisticMiss
	}
	what := "ydbstore: transaction"
	if readOnly {
		what = "ydbstore: read transaction"
	}
	return txResult(ctx, err, fnErr, readOnly, what)
}

// runClosure runs fn on t, then sends t's deferred writes with the commit.
func runClosure(ctx context.Context, t *tx, fn func(context.Context, store.Tx) error) error {
	if err := fn(ctx, t); err != nil {
		return err
	}
	return t.finish(ctx)
}

// OfflineConn is a Conn that also takes the commit RPC (RunOffline).
type OfflineConn interface {
	Conn
	// Commit is called where DoTx would send CommitTransaction: after a
	// closure that sent a statement, none of which carried the commit
	// (internal/query/transaction.go CommitTx, ydb-go-sdk v3.127.4: a lazy
	// transaction that sent nothing, or one completed by a committing
	// statement, sends no commit).
	Commit(ctx context.Context) error
}

// offlineRollback is an OfflineConn that also takes the rollback RPC: where
// DoTx would send RollbackTransaction (a closure that failed after a
// statement began its transaction, none having carried the commit).
type offlineRollback interface {
	Rollback(ctx context.Context) error
}

// RunOffline runs fn as InTx (or View, readOnly) would, over c instead of a
// database session: the same deferred writes, flushes and commit, and the
// same rerun with immediate checks after errOptimisticMiss. It counts what
// the probe (probe.go) and the transaction send in steady state, running fn
// once: snapshot reads once; a View of one read is that one request, a View
// of more reads its reads and the commit. It exists to
// count and check what the adapter sends (package ydbtrips; the package's
// tests); it retries nothing else.
func RunOffline(ctx context.Context, cfg Config, c OfflineConn, readOnly bool, fn func(context.Context, store.Tx) error) error {
	cfg.setDefaults()
	attempt := func(immediate bool) error {
		// One pass that counts what the probe and the real run send
		// together in steady state (probe.go), so the closure runs once.
		t := &tx{c: c, cfg: &cfg, immediate: immediate, readOnly: readOnly}
		err := runClosure(ctx, t, fn)
		if readOnly && t.txReads <= 1 {
			return err // a single-read View is its one snapshot request
		}
		if err == nil && t.ran && !t.committed {
			return c.Commit(ctx)
		}
		if rb, ok := c.(offlineRollback); ok && err != nil && t.ran && !t.committed {
			// DoTx's deferred Rollback sends RollbackTransaction for a
			// transaction that began and did not complete.
			_ = rb.Rollback(ctx)
		}
		return err
	}
	err := attempt(cfg.ImmediateWrites)
	if errors.Is(err, errOptimisticMiss) {
		err = attempt(true)
	}
	return err
}
