package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// Group commit of concurrent write transactions.
//
// Every InTx runs on the one writer connection, so under load callers queue
// for it — and each then pays its own BEGIN IMMEDIATE and COMMIT. The COMMIT
// is the expensive part: in WAL mode it appends one frame per dirty page
// (two write system calls each). Measured in the e2e burst of scripts/bench
// on the shared 2-core machine: COMMIT was about 30 % of the CPU of all
// write transactions, and the writer was busy for most of the run. Grouped,
// the burst's ~6000 store commits became ~1200 (about five callers per
// group); the burst's final-state rate rose by 5–30 % across runs (the
// machine is noisy), with a savepoint journal in memory (temp_store).
//
// So the callers that are waiting when the writer becomes free run as one
// group: one SQLite transaction; each caller's fn, in arrival order, inside
// its own SAVEPOINT; one COMMIT. Per caller nothing changes:
//
//   - fn runs on the caller's goroutine, alone on the connection, and sees
//     every write committed before and every write of the fns before it in
//     the group — the same serial order the callers would have had one
//     transaction at a time;
//   - an error (or a panic) from fn rolls back to its savepoint, so its writes
//     vanish and the other members are unaffected; InTx returns that error
//     (or re-panics) as before;
//   - InTx returns nil only after the group's COMMIT succeeded; if the COMMIT
//     fails, or SQLite rolled the whole transaction back under a member
//     (an I/O error), every member whose fn succeeded gets the error and none
//     of their writes is kept.
//
// A caller's context is checked before each of its statements, but a
// statement is never interrupted once it runs: interrupting a write inside
// an explicit transaction rolls back the whole transaction
// (sqlite.org/c3ref/interrupt.html), that is every member's work.
//
// A lone caller runs as before (no savepoint). maxGroup bounds a group so a
// steady stream of arrivals cannot hold the transaction open forever.
const maxGroup = 32

// writer serialises the write transactions of a Store and groups them.
type writer struct {
	db *sql.DB

	mu      sync.Mutex
	waiting []*member
	busy    bool // a group is running
	// commits counts COMMITs, reruns the groups run again with savepoints
	// after an optimistic run failed (tests).
	commits, reruns int
}

// member is one InTx call waiting for, or running in, a group.
type member struct {
	ctx  context.Context
	fn   func(context.Context, store.Tx) error
	turn chan turn  // the leader's hand-over: run fn now (or lead the next group)
	done chan error // fn's outcome back to the leader (nil, an error, or errPanicked)
	res  chan error // the final outcome for the caller
	// panicked is the value fn panicked with (errPanicked was reported).
	panicked any
	// wrote: fn's last run issued a statement that may have written.
	wrote bool
}

type turn struct {
	tx   *sql.Tx
	lead bool // the caller becomes the leader of the next group
}

// errPanicked marks a member whose fn panicked (the caller re-panics).
var errPanicked = fmt.Errorf("sqlitestore: transaction body panicked")

// do runs fn in a group transaction and returns its outcome. stmts is the
// writer pool's statement cache.
func (w *writer) do(ctx context.Context, stmts *stmtCache, fn func(context.Context, store.Tx) error) error {
	m := &member{ctx: ctx, fn: fn, turn: make(chan turn, 1), done: make(chan error, 1), res: make(chan error, 1)}
	w.mu.Lock()
	w.waiting = append(w.waiting, m)
	lead := !w.busy
	if lead {
		w.busy = true
	}
	w.mu.Unlock()
	for {
		if lead {
			w.lead(m, stmts)
			lead = false
		}
		select {
		case t := <-m.turn:
			if t.lead {
				lead = true
				continue
			}
			m.done <- m.run(t.tx, stmts)
		case err := <-m.res:
			if err == errPanicked {
				panic(m.panicked)
			}
			return err
		}
	}
}

// runOptimistic runs the group's members one after another in one
// transaction without savepoints and delivers their outcomes. A member whose
// fn fails without having issued a write leaves nothing to undo and gets its
// error; one that fails (or panics) after a write makes it roll everything
// back and return false, with no outcome delivered: the caller runs the
// group again with savepoints.
func (w *writer) runOptimistic(self *member, group []*member, stmts *stmtCache) bool {
	sqlTx, err := w.db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, m := range group {
			m.res <- classify(m.ctx, err, "sqlitestore: begin transaction")
		}
		return true
	}
	outcome := make([]error, len(group))
	for i, m := range group {
		if err := m.ctx.Err(); err != nil {
			outcome[i] = classify(m.ctx, err, "sqlitestore: begin transaction")
			continue
		}
		outcome[i] = m.runIn(self, sqlTx, stmts)
		if outcome[i] != nil && m.wrote {
			_ = sqlTx.Rollback()
			w.mu.Lock()
			w.reruns++
			w.mu.Unlock()
			return false
		}
		if err := txLost(sqlTx); err != nil {
			// SQLite rolled the whole transaction back under this member
			// and its fn carried on: the later members must not run (their
			// statements would autocommit one by one), and nothing of the
			// group survives. The savepoint pass notices the same at RELEASE.
			_ = sqlTx.Rollback()
			for j, m := range group {
				if outcome[j] == nil || j > i {
					outcome[j] = apperr.Wrap(apperr.Transient, err, "sqlitestore: group transaction failed; nothing of it was committed")
				}
				m.res <- outcome[j]
			}
			return true
		}
	}
	err = sqlTx.Commit()
	if err == nil {
		w.mu.Lock()
		w.commits++
		w.mu.Unlock()
	}
	for i, m := range group {
		if outcome[i] == nil && err != nil {
			outcome[i] = apperr.Wrap(apperr.Transient, err, "sqlitestore: group transaction failed; nothing of it was committed")
		}
		m.res <- outcome[i]
	}
	return true
}

// errTxLost: SQLite ended the group's transaction on its own.
var errTxLost = fmt.Errorf("sqlitestore: SQLite rolled the transaction back (an I/O, memory or full-disk error)")

// txLost reports whether the transaction sqlTx runs is gone: SQLite rolls a
// whole transaction back on some errors (SQLITE_FULL, IOERR, NOMEM, ...;
// sqlite.org/lang_transaction.html, "Response To Errors Within A
// Transaction"), and later statements then run in autocommit mode. BEGIN
// fails inside a transaction and succeeds only outside one; a probe that
// succeeds is rolled back at once.
func txLost(sqlTx *sql.Tx) error {
	_, err := sqlTx.Exec("BEGIN")
	if err != nil && strings.Contains(err.Error(), "within a transaction") {
		return nil
	}
	if err == nil {
		_, _ = sqlTx.Exec("ROLLBACK")
		return errTxLost
	}
	return fmt.Errorf("%w: %w", errTxLost, err)
}

// runIn runs the member's fn on the group's transaction and returns its
// outcome: here when m is self (the leader's own member), otherwise on
// m's goroutine, which the leader hands the transaction to and waits for.
func (m *member) runIn(self *member, sqlTx *sql.Tx, stmts *stmtCache) error {
	if m == self {
		return m.run(sqlTx, stmts)
	}
	m.turn <- turn{tx: sqlTx}
	return <-m.done
}

// run runs the member's fn on the group's transaction, on the caller's
// goroutine, and reports a panic as errPanicked (re-raised by do).
func (m *member) run(sqlTx *sql.Tx, stmts *stmtCache) (err error) {
	t := &tx{tx: sqlTx, stmts: stmts, detach: true}
	defer func() {
		m.wrote = t.writes > 0
		if p := recover(); p != nil {
			m.panicked = p
			err = errPanicked
		}
	}()
	return m.fn(m.ctx, t)
}

// lead takes the waiting members (up to maxGroup; self, the leader's own
// member, is the first of them) and runs them as one transaction, then hands
// leadership to the next waiter or ends.
func (w *writer) lead(self *member, stmts *stmtCache) {
	w.mu.Lock()
	n := min(len(w.waiting), maxGroup)
	group := append([]*member(nil), w.waiting[:n]...)
	w.waiting = w.waiting[n:]
	w.mu.Unlock()

	w.runGroup(self, group, stmts)

	w.mu.Lock()
	if len(w.waiting) == 0 {
		w.busy = false
		w.mu.Unlock()
		return
	}
	next := w.waiting[0]
	w.mu.Unlock()
	next.turn <- turn{lead: true}
}

// runGroup runs every member's fn in one transaction and delivers each
// member's final outcome on its res channel. self runs on this goroutine.
//
// A group first runs without savepoints (runOptimistic): a savepoint makes
// SQLite copy every page a member first touches into its sub-journal, about
// a tenth of the CPU of POST /orders in scripts/bench. Only a member that
// fails after issuing a write needs its writes undone; then the whole
// transaction is rolled back and the group runs again, each member in its
// own savepoint. fn may run more than once anyway (store.Store.InTx).
// After each member a probe (txLost) checks that SQLite has not rolled the
// transaction back under it, which the savepoints' RELEASE would notice.
func (w *writer) runGroup(self *member, group []*member, stmts *stmtCache) {
	if len(group) > 1 && w.runOptimistic(self, group, stmts) {
		return
	}
	// The transaction must not end when one member's context does.
	sqlTx, err := w.db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, m := range group {
			m.res <- classify(m.ctx, err, "sqlitestore: begin transaction")
		}
		return
	}
	solo := len(group) == 1
	outcome := make([]error, len(group))
	var broken error // the transaction itself failed: nothing of the group survives
	for i, m := range group {
		if err := m.ctx.Err(); err != nil {
			outcome[i] = classify(m.ctx, err, "sqlitestore: begin transaction")
			continue
		}
		if !solo {
			if _, err := sqlTx.Exec("SAVEPOINT member"); err != nil {
				broken = err
				break
			}
		}
		outcome[i] = m.runIn(self, sqlTx, stmts)
		if solo {
			break
		}
		if outcome[i] != nil {
			// ROLLBACK TO keeps the savepoint open; RELEASE then removes it.
			// Either fails if SQLite has rolled the whole transaction back.
			if _, err := sqlTx.Exec("ROLLBACK TO member"); err != nil {
				broken = err
				break
			}
		}
		if _, err := sqlTx.Exec("RELEASE member"); err != nil {
			broken = err
			break
		}
	}
	switch {
	case broken != nil:
		_ = sqlTx.Rollback()
	case solo && outcome[0] != nil:
		_ = sqlTx.Rollback() // a lone member's error: as a single transaction
	default:
		if err := sqlTx.Commit(); err != nil {
			broken = err
		} else {
			w.mu.Lock()
			w.commits++
			w.mu.Unlock()
		}
	}
	for i, m := range group {
		err := outcome[i]
		if err == nil && broken != nil {
			if solo {
				err = classify(m.ctx, broken, "sqlitestore: commit")
			} else {
				err = apperr.Wrap(apperr.Transient, broken, "sqlitestore: group transaction failed; nothing of it was committed")
			}
		}
		m.res <- err
	}
}
