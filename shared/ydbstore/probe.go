package ydbstore

import (
	"context"
	"errors"

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

// snapRead is one snapshot read of a probe: its text and rows.
type snapRead struct {
	yql  string
	rows []query.Row
}

// probeConn is the Conn of a probe.
type probeConn struct {
	qc     query.Client
	reads  []snapRead
	needTx bool
	// failed: a snapshot read failed; the error's handling (the SDK's
	// retries) is left to the real run.
	failed bool
}

func (p *probeConn) Exec(context.Context, string, ydb.Params, bool) error {
	p.needTx = true
	return errNeedsTx
}

func (p *probeConn) QueryRow(context.Context, string, ydb.Params) (query.Row, error) {
	p.needTx = true
	return nil, errNeedsTx
}

func (p *probeConn) Each(context.Context, string, ydb.Params, func(query.Row) error) error {
	p.needTx = true
	return errNeedsTx
}

func (p *probeConn) Snapshot(ctx context.Context, yql string, ps ydb.Params, fn func(query.Row) error) error {
	read := snapRead{yql: yql}
	err := sdkConn{qc: p.qc}.Snapshot(ctx, yql, ps, func(r query.Row) error {
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
