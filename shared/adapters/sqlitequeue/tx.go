package sqlitequeue

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"ordersaga/shared/domain/apperr"
)

// immediate runs fn inside a BEGIN IMMEDIATE transaction on a dedicated
// connection: the write lock is taken up front (waiting up to the busy
// timeout), so the reads fn makes cannot be invalidated by another writer
// before its writes. The statements are issued by hand because the *sql.DB
// may be shared and opened without _txlock=immediate. fn's error is returned
// as is; database errors are classified.
func (q *Queue) immediate(ctx context.Context, fn func(ctx context.Context, conn *sql.Conn) error) error {
	conn, err := q.db.Conn(ctx)
	if err != nil {
		return classify(err, "sqlitequeue: get connection")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return classify(err, "sqlitequeue: begin")
	}
	if err := fn(ctx, conn); err != nil {
		rollback(ctx, conn)
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		rollback(ctx, conn)
		return classify(err, "sqlitequeue: commit")
	}
	return nil
}

// rollback ends the transaction even if ctx is done. If that fails the
// connection is discarded rather than returned to a shared pool with a
// transaction still open.
func rollback(ctx context.Context, conn *sql.Conn) {
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// classify wraps a database error in its apperr kind: context ends, busy and
// locked databases are Transient; anything else is Internal. The sqlite
// driver's result code is used, never the message text.
func classify(err error, msg string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apperr.Wrap(apperr.Transient, err, "%s", msg)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT:
			return apperr.Wrap(apperr.Transient, err, "%s", msg)
		}
	}
	return apperr.Wrap(apperr.Internal, err, "%s", msg)
}

// wakeup returns a channel closed at the next change to the named queue made
// through this Queue. Take it before checking the queue, so a change between
// the check and the wait is not missed.
func (q *Queue) wakeup(name string) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch, ok := q.wakeups[name]
	if !ok {
		ch = make(chan struct{})
		q.wakeups[name] = ch
	}
	return ch
}

// wake releases every long poll waiting on the named queues.
func (q *Queue) wake(names ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, name := range names {
		if ch, ok := q.wakeups[name]; ok {
			close(ch)
			delete(q.wakeups, name)
		}
	}
}
