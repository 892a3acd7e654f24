package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// Retry bounds of one InTx/View call on SQLITE_BUSY / SQLITE_LOCKED. Each
// attempt has already waited up to busy_timeout inside SQLite, so a few
// attempts with a short pause are plenty.
const (
	maxAttempts  = 5
	retryBackoff = 10 * time.Millisecond
	maxBackoff   = 200 * time.Millisecond
)

// run executes fn in a transaction of db, retrying on lock contention.
func (s *Store) run(ctx context.Context, db *sql.DB, readOnly bool, fn func(context.Context, store.Tx) error) error {
	// Prepare the statements this transaction used for the first time, now
	// that no transaction holds the connection.
	defer s.cacheFor(db).prepareMissing(context.WithoutCancel(ctx))
	backoff := retryBackoff
	for attempt := 1; ; attempt++ {
		err := s.once(ctx, db, readOnly, fn)
		if err == nil && !readOnly {
			s.ckpt.wrote()
		}
		if err == nil || !isBusy(err) || ctx.Err() != nil {
			return err
		}
		if attempt == maxAttempts {
			return apperr.Wrap(apperr.Transient, err, "sqlitestore: database busy after %d attempts", attempt)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return apperr.Wrap(apperr.Transient, ctx.Err(), "sqlitestore: database busy")
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// once runs fn in one transaction. Errors from fn come back unchanged, so the
// caller can tell a lock conflict inside fn (its chain holds the driver's
// busy error) from the caller's own errors.
func (s *Store) once(ctx context.Context, db *sql.DB, readOnly bool, fn func(context.Context, store.Tx) error) (err error) {
	if !readOnly && s.w != nil {
		return s.w.do(ctx, s.rwStmts, fn)
	}
	sqlTx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: readOnly})
	if err != nil {
		return classify(ctx, err, "sqlitestore: begin transaction")
	}
	done := false
	defer func() {
		if !done {
			// fn panicked: roll back, then let the panic continue.
			_ = sqlTx.Rollback()
		}
	}()
	err = fn(ctx, &tx{tx: sqlTx, stmts: s.cacheFor(db)})
	done = true
	if err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if readOnly {
		// Nothing to commit; rollback ends the read snapshot.
		if err := sqlTx.Rollback(); err != nil {
			return classify(ctx, err, "sqlitestore: end read transaction")
		}
		return nil
	}
	if err := sqlTx.Commit(); err != nil {
		return classify(ctx, err, "sqlitestore: commit")
	}
	return nil
}
