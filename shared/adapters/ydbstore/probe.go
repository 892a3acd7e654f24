package ydbstore

import (
	"context"
	"errors"
	"sync"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
)

// A transaction with nothing to do costs nothing.
//
// ydb-go-sdk v3.127.4 (internal/query/client.go doTx) always defers
// tx.Rollback, and Rollback of a lazy transaction that sent no statement
// closes its session (internal/query/transaction.go, Rollback: "return
// tx.s.Close(ctx)", ydb-go-sdk issue 1456): DeleteSession, and the next
// transaction pays CreateSession and AttachSession. An idle relay run (its
// candidate list is a snapshot read outside the transaction) or a purge
// that TTL already does would pay that every time.
//
// So every closure first runs as a probe, outside any session: snapshot
// reads (Conn.Snapshot, their own one-request transactions) run for real
// and their rows are kept; the first statement that needs the transaction
// (a read in it, an immediate write) stops the probe. A probe that needed
// no transaction and left no deferred write is the whole run: no DoTx,
// no session taken. Otherwise the closure runs again in DoTx, and its
// snapshot reads get the probe's rows back in order instead of a second
// request (they decide nothing inside the transaction: that is why they
// run outside it), so the probe adds no round trip. Closures are
// deterministic and free of outside I/O (store.Store says so), so running
// one twice is allowed.

// errNeedsTx stops a probe at its first statement that needs the transaction.
var errNeedsTx = errors.New("ydbstore: the closure needs a transaction")

// A View (read-only) whose closure makes one read is one request: the
// probe sends its first read as a snapshot read-only request of its own
// (BeginTx(snapshot read-only) + CommitTx in its TxControl), and if the
// closure then ends, that was the whole View: no CommitTransaction or
// RollbackTransaction follows. A second read needs the View's one snapshot,
// so the closure runs again in DoTx and reads everything there. The store
// remembers the first read's text of such a View (viewShapes), and sends
// that View straight to DoTx from then on: a View of k reads costs k+1
// requests (k+2 the first time in a process), one of one read costs 1.

// viewShapes remembers the Views that read more than once, by the text of
// their first read. Safe for concurrent use.
type viewShapes struct{ multi sync.Map }

func (v *viewShapes) isMulti(yql string) bool {
	_, ok := v.multi.Load(yql)
	return ok
}

// snapRead is one snapshot read of a probe: its text and rows.
type snapRead struct {
	yql  string
	rows []query.Row
}

// probeConn is the Conn of a probe. snap runs a snapshot read (the real
// one, or an offline Conn's).
type probeConn struct {
	snap     func(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error
	readOnly bool
	views    *viewShapes
	first    string // the text of a read-only probe's first read
	reads    []snapRead
	needTx   bool
	// txReads counts the reads of a read-only probe sent as single-read
	// snapshot requests (at most one: a second needs the transaction).
	txReads int
	// failed: a snapshot read failed; the error's handling (the SDK's
	// retries) is left to the real run.
	failed bool
}

func (p *probeConn) Exec(context.Context, string, ydb.Params, bool) error {
	p.needTx = true
	return errNeedsTx
}

func (p *probeConn) QueryRow(ctx context.Context, yql string, ps ydb.Params) (query.Row, error) {
	var first query.Row
	err := p.Each(ctx, yql, ps, func(r query.Row) error {
		if first == nil {
			first = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, query.ErrNoRows
	}
	return first, nil
}

func (p *probeConn) Each(ctx context.Context, yql string, ps ydb.Params, fn func(query.Row) error) error {
	if p.readOnly && p.txReads > 0 {
		p.views.multi.Store(p.first, true)
	}
	if p.needTx || !p.readOnly || p.txReads > 0 || p.views.isMulti(yql) {
		p.needTx = true
		return errNeedsTx
	}
	p.txReads++
	p.first = yql
	err := p.snap(ctx, yql, ps, fn)
	if err != nil {
		p.failed = true
	}
	return err
}

func (p *probeConn) Snapshot(ctx context.Context, yql string, ps ydb.Params, fn func(query.Row) error) error {
	if p.needTx { // the probe is over: what follows runs in the transaction
		return errNeedsTx
	}
	read := snapRead{yql: yql}
	err := p.snap(ctx, yql, ps, func(r query.Row) error {
		read.rows = append(read.rows, r)
		return nil
	})
	if err != nil {
		p.failed = true
		return err
	}
	p.reads = append(p.reads, read)
	for _, r := range read.rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// done reports whether the probe was the whole run.
func (p *probeConn) done(t *tx) bool {
	return !p.needTx && !p.failed && len(t.pending) == 0
}

// replayConn is the real run's Conn: its snapshot reads are answered from
// the probe's, in order, while they match; everything else goes to c.
type replayConn struct {
	Conn
	reads []snapRead
}

func (r *replayConn) Snapshot(ctx context.Context, yql string, ps ydb.Params, fn func(query.Row) error) error {
	if len(r.reads) == 0 || r.reads[0].yql != yql {
		r.reads = nil
		return r.Conn.Snapshot(ctx, yql, ps, fn)
	}
	read := r.reads[0]
	r.reads = r.reads[1:]
	for _, row := range read.rows {
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}
