package sqlitestore

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"ordersaga/shared/domain/apperr"
)

// sqliteCode returns the extended result code of the driver error in err's
// chain (the driver enables extended codes on every connection), or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// isBusy reports whether err's chain holds SQLITE_BUSY or SQLITE_LOCKED (any
// extended variant): another connection holds a conflicting lock, and the
// transaction may succeed if run again.
func isBusy(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// isDuplicate reports whether err is a PRIMARY KEY or UNIQUE constraint failure.
func isDuplicate(err error) bool {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return true
	}
	return false
}

// classify translates a driver error into the apperr vocabulary, by result
// code only. msg (with args) is the caller-safe description of the operation.
// Errors that already carry a kind pass through unchanged.
func classify(ctx context.Context, err error, msg string, args ...any) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	what := fmt.Sprintf(msg, args...)
	if ctx.Err() != nil {
		// A cancelled context interrupts SQLite (SQLITE_INTERRUPT) or fails in
		// database/sql; either way the cause is the context.
		return apperr.Wrap(apperr.Transient, errors.Join(ctx.Err(), err), "%s", what)
	}
	code := sqliteCode(err)
	switch {
	case isBusy(err):
		return apperr.Wrap(apperr.Transient, err, "%s: database busy", what)
	case isDuplicate(err):
		return apperr.Wrap(apperr.Conflict, err, "%s: already exists", what)
	case code&0xff == sqlite3.SQLITE_READONLY:
		return apperr.Wrap(apperr.Internal, err, "%s: write in a read-only transaction", what)
	case code&0xff == sqlite3.SQLITE_INTERRUPT:
		return apperr.Wrap(apperr.Transient, err, "%s: interrupted", what)
	case code&0xff == sqlite3.SQLITE_FULL:
		return apperr.Wrap(apperr.Transient, err, "%s: disk full", what)
	}
	return apperr.Wrap(apperr.Internal, err, "%s", what)
}
