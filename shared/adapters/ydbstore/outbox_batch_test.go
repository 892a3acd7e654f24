package ydbstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/store"
)

// batchConn answers yqlOutboxVersions with versions and fails the first
// guarded flush with the guard's Ensure message, as YDB would when a row
// moved on; everything else succeeds.
type batchConn struct {
	versions map[string]int64
	failOnce bool
	sent     []string
	commits  int
}

func (c *batchConn) Exec(_ context.Context, yql string, _ ydb.Params, commit bool) error {
	c.sent = append(c.sent, yql)
	if c.failOnce && strings.Contains(yql, guardMarker) {
		c.failOnce = false
		return errors.New("Condition violated: " + guardMarker)
	}
	return nil
}

func (c *batchConn) QueryRow(context.Context, string, ydb.Params) (query.Row, error) {
	return nil, query.ErrNoRows
}

func (c *batchConn) Each(_ context.Context, yql string, _ ydb.Params, fn func(query.Row) error) error {
	c.sent = append(c.sent, yql)
	for id, v := range c.versions {
		if err := fn(versionRow{id: id, version: v}); err != nil {
			return err
		}
	}
	return nil
}

func (c *batchConn) Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	return c.Each(ctx, yql, p, fn)
}

func (c *batchConn) Commit(context.Context) error { c.commits++; return nil }

// versionRow is one row of yqlOutboxVersions.
type versionRow struct {
	query.Row // not implemented: only ScanNamed is used
	id        string
	version   int64
}

func (r versionRow) ScanNamed(dst ...query.NamedDestination) error {
	for _, d := range dst {
		switch p := d.Ref().(type) {
		case *string:
			*p = r.id
		case *int64:
			*p = r.version
		}
	}
	return nil
}

// TestBatchedOutboxWritesAreGuarded: a batch lease is one committing
// statement with the batch guard and no version read; when the guard fails
// the closure reruns with a version read and counts only the rows that
// were at their expected version; a row read in the transaction needs no
// guard.
func TestBatchedOutboxWritesAreGuarded(t *testing.T) {
	rows := []store.OutboxVersion{{ID: "a", Version: 1}, {ID: "b", Version: 1}, {ID: "a", Version: 1}}
	until := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	c := &batchConn{versions: map[string]int64{"a": 1, "b": 1}}
	var n int
	err := RunOffline(context.Background(), Config{}, c, false, func(ctx context.Context, st store.Tx) (err error) {
		n, err = st.LeaseOutbox(ctx, rows, "relay-1", until)
		return err
	})
	if err != nil || n != 2 {
		t.Fatalf("optimistic lease: n=%d err=%v, want 2 rows (a duplicate id counts once)", n, err)
	}
	if len(c.sent) != 1 || c.sent[0] != yqlLeaseOutboxGuarded || c.commits != 0 {
		t.Errorf("want one guarded lease statement carrying the commit, got %d statements, %d commit RPCs", len(c.sent), c.commits)
	}

	// b moved on: the guard fails, the rerun reads versions and leases a only.
	c = &batchConn{versions: map[string]int64{"a": 1, "b": 2}, failOnce: true}
	calls := 0
	err = RunOffline(context.Background(), Config{}, c, false, func(ctx context.Context, st store.Tx) (err error) {
		calls++
		n, err = st.LeaseOutbox(ctx, rows, "relay-1", until)
		return err
	})
	if err != nil || n != 1 || calls != 2 {
		t.Fatalf("after a failed guard: n=%d calls=%d err=%v, want 1 row on the second run", n, calls, err)
	}
	if got := c.sent[len(c.sent)-2:]; got[0] != yqlOutboxVersions || got[1] != yqlLeaseOutbox {
		t.Errorf("rerun sent %q, want the version read and the unguarded lease", got)
	}

	c = &batchConn{versions: map[string]int64{"a": 1}}
	err = RunOffline(context.Background(), Config{}, c, false, func(ctx context.Context, st store.Tx) (err error) {
		st.(*tx).saw(rowKey("outbox", "a"), 1) // as GetOutbox would
		n, err = st.MarkOutboxPublished(ctx, rows[:1], until)
		return err
	})
	// One query with the commit: the unguarded mark, then the promote of
	// the rows' aggregates' next heads (outbox_heads.go), which sees it.
	if err != nil || n != 1 || len(c.sent) != 1 {
		t.Fatalf("mark of a row read here: n=%d err=%v, sent %d statements", n, err, len(c.sent))
	}
	mark, promote := strings.Index(c.sent[0], "$w0_status AS status"), strings.Index(c.sent[0], "$w1_firsts = SELECT")
	if strings.Contains(c.sent[0], guardMarker) || mark < 0 || promote < mark {
		t.Errorf("mark of a row read here sent %q, want the unguarded mark and then the promote", c.sent[0])
	}
}
