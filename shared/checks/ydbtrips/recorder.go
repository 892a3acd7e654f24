// Package ydbtrips counts the YDB round trips of ordersaga's business
// operations without a YDB server, to hold them to their targets.
//
// The business code runs unchanged on the SQLite store. Every transaction
// it opens is run a second time, call by call, by the YDB adapter over a
// TripCounter (ydbstore.RunOffline): the adapter builds exactly the statements,
// flushes and commits it would send to YDB, and the TripCounter counts them as
// round trips (each query one, plus a CommitTransaction where the SDK
// would send one; begins are lazy and cost none). Reads are answered with
// the keys and versions SQLite returned for the same call, so the adapter
// takes the same branches it would take on a database holding those rows.
// Nothing is executed: this counts requests, it does not test YDB.
//
// The package is imported by scripts/bench and by its own test; nothing
// that ships imports it.
package ydbtrips

import (
	"context"
	"reflect"
	"strings"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/adapters/ydbstore"
)

// Trips are the requests of one or more transactions.
type Trips struct {
	Queries int // statements sent (reads, flushes, snapshot reads)
	Commits int // CommitTransaction RPCs
	// Rollbacks are RollbackTransaction RPCs (a closure that failed after
	// its first statement, e.g. on an optimistic miss or a NotFound read).
	Rollbacks int
	// Texts counts the statements by their first table-naming line, for
	// a reader who wants to see what was sent.
	Texts map[string]int
	// Seq is every request in the order sent ("commit" for a
	// CommitTransaction), for reading a count.
	Seq []string
}

// Total is the round trips: queries plus commit and rollback RPCs (begins
// are lazy).
func (t Trips) Total() int { return t.Queries + t.Commits + t.Rollbacks }

func (t *Trips) add(o Trips) {
	t.Queries += o.Queries
	t.Commits += o.Commits
	t.Rollbacks += o.Rollbacks
	t.Seq = append(t.Seq, o.Seq...)
	for k, v := range o.Texts {
		if t.Texts == nil {
			t.Texts = map[string]int{}
		}
		t.Texts[k] += v
	}
}

// TripCounter is a ydbstore.OfflineConn that executes nothing, counts every
// request and answers reads with Rows.
type TripCounter struct {
	Trips Trips
	// Rows answer the next reads: each read returns all of them (none:
	// no row). Columns absent from a row read as NULL / zero.
	Rows []map[string]any
}

var _ ydbstore.OfflineConn = (*TripCounter)(nil)

func (r *TripCounter) note(yql string) {
	r.Trips.Queries++
	if r.Trips.Texts == nil {
		r.Trips.Texts = map[string]int{}
	}
	r.Trips.Texts[summary(yql)]++
	r.Trips.Seq = append(r.Trips.Seq, summary(yql))
}

// summary names a statement by its verbs and tables.
func summary(yql string) string {
	var parts []string
	for _, line := range strings.Split(yql, "\n") {
		l := strings.TrimSpace(line)
		for _, verb := range []string{"SELECT ", "INSERT INTO ", "UPSERT INTO ", "DELETE FROM ", "UPDATE "} {
			if strings.HasPrefix(l, verb) {
				f := strings.Fields(l)
				parts = append(parts, f[0]+" "+tableAfter(f))
			}
		}
	}
	return strings.Join(parts, "; ")
}

func tableAfter(f []string) string {
	for i, w := range f {
		if (w == "FROM" || w == "INTO" || w == "UPDATE") && i+1 < len(f) {
			return strings.Trim(f[i+1], "`(;")
		}
	}
	return ""
}

// Exec implements ydbstore.Conn.
func (r *TripCounter) Exec(_ context.Context, yql string, _ ydb.Params, _ bool) error {
	r.note(yql)
	return nil
}

// QueryRow implements ydbstore.Conn.
func (r *TripCounter) QueryRow(_ context.Context, yql string, _ ydb.Params) (query.Row, error) {
	r.note(yql)
	if len(r.Rows) == 0 {
		return nil, query.ErrNoRows
	}
	return row{m: r.Rows[0]}, nil
}

// Each implements ydbstore.Conn.
func (r *TripCounter) Each(_ context.Context, yql string, _ ydb.Params, fn func(query.Row) error) error {
	r.note(yql)
	for _, m := range r.Rows {
		if err := fn(row{m: m}); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot implements ydbstore.Conn: one request (begin and commit in it).
func (r *TripCounter) Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	return r.Each(ctx, yql, p, fn)
}

// Commit implements ydbstore.OfflineConn.
func (r *TripCounter) Commit(context.Context) error {
	r.Trips.Commits++
	r.Trips.Seq = append(r.Trips.Seq, "commit")
	return nil
}

// Rollback counts the RollbackTransaction RPC (ydbstore.RunOffline).
func (r *TripCounter) Rollback(context.Context) error {
	r.Trips.Rollbacks++
	r.Trips.Seq = append(r.Trips.Seq, "rollback")
	return nil
}

// row is an answer: named columns, set into destinations of a matching type.
type row struct {
	query.Row // only ScanNamed is used by the adapter
	m         map[string]any
}

func (w row) ScanNamed(dst ...query.NamedDestination) error {
	for _, d := range dst {
		v, ok := w.m[d.Name()]
		if !ok {
			continue
		}
		ref := reflect.ValueOf(d.Ref()).Elem()
		val := reflect.ValueOf(v)
		switch {
		case val.Type().AssignableTo(ref.Type()):
			ref.Set(val)
		case ref.Kind() == reflect.Pointer && val.Type().AssignableTo(ref.Type().Elem()):
			p := reflect.New(ref.Type().Elem())
			p.Elem().Set(val)
			ref.Set(p)
		case val.CanConvert(ref.Type()):
			ref.Set(val.Convert(ref.Type()))
		}
	}
	return nil
}
