package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"modernc.org/sqlite"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

func open(t *testing.T, path string, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// realBusyError provokes SQLITE_BUSY from the driver and returns it.
func realBusyError(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder := open(t, path, Config{})
	other := open(t, path, Config{BusyTimeout: time.Millisecond})
	lock, err := holder.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback() //nolint:errcheck
	_, err = other.DB().Exec(`INSERT INTO audit (id, at, actor, action, count, outcome) VALUES ('x', 0, '', '', 0, '')`)
	var se *sqlite.Error
	if !errors.As(err, &se) || !isBusy(err) {
		t.Fatalf("write under a held lock returned %v, want SQLITE_BUSY", err)
	}
	return err
}

func TestRunRetriesBusyInsideFn(t *testing.T) {
	busy := realBusyError(t)
	s := open(t, filepath.Join(t.TempDir(), "s.db"), Config{})
	ctx := context.Background()
	other := apperr.New(apperr.Rejected, "no")
	for _, tc := range []struct {
		name     string
		failures int   // runs that fail before fn succeeds
		err      error // what the failing runs return
		wantRuns int
		wantKind apperr.Kind
		wantOK   bool
	}{
		{"busy twice then ok", 2, apperr.Wrap(apperr.Transient, busy, "wrapped"), 3, 0, true},
		{"busy forever", 100, fmt.Errorf("raw: %w", busy), maxAttempts, apperr.Transient, false},
		{"other errors are not retried", 100, other, 1, apperr.Rejected, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				runs++
				if runs <= tc.failures {
					return tc.err
				}
				return nil
			})
			if runs != tc.wantRuns {
				t.Errorf("fn ran %d times, want %d", runs, tc.wantRuns)
			}
			switch {
			case tc.wantOK && err != nil:
				t.Errorf("InTx: %v", err)
			case !tc.wantOK && !apperr.Is(err, tc.wantKind):
				t.Errorf("InTx: %v (kind %v), want kind %v", err, apperr.KindOf(err), tc.wantKind)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	busy := realBusyError(t)
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want apperr.Kind
	}{
		{"busy", ctx, busy, apperr.Transient},
		{"cancelled context", cancelled, errors.New("interrupted"), apperr.Transient},
		{"plain error", ctx, errors.New("boom"), apperr.Internal},
		{"already classified", ctx, apperr.New(apperr.Rejected, "x"), apperr.Rejected},
	} {
		if got := apperr.KindOf(classify(tc.ctx, tc.err, "op")); got != tc.want {
			t.Errorf("%s: kind %v, want %v", tc.name, got, tc.want)
		}
	}
	if classify(ctx, nil, "op") != nil {
		t.Error("classify(nil) != nil")
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return time.Unix(1700000000, 0) }
	good := fstest.MapFS{
		"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);\nCREATE INDEX a_x ON a (x);")},
		"m/0002_b.sql": {Data: []byte("CREATE TABLE b (y TEXT);")},
		"m/README.md":  {Data: []byte("not a migration")},
	}
	bad := fstest.MapFS{
		"m/0001_a.sql": good["m/0001_a.sql"],
		"m/0002_b.sql": good["m/0002_b.sql"],
		// The first statement succeeds, the second fails: both must roll back.
		"m/0003_c.sql": {Data: []byte("CREATE TABLE c (z INTEGER);\nINSERT INTO missing_table VALUES (1);")},
	}
	s := open(t, filepath.Join(t.TempDir(), "m.db"), Config{})
	db := s.DB()
	tables := func() map[string]bool {
		rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('a', 'b', 'c')`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]bool{}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			m[n] = true
		}
		return m
	}
	versions := func() []int {
		rows, err := db.Query(`SELECT version FROM schema_migrations WHERE version < 100 ORDER BY version`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var vs []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		return vs
	}
	// The store's own migrations are 1..N; test files use a separate table
	// namespace but share schema_migrations, so clear them first.
	if _, err := db.Exec(`DELETE FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}

	if err := migrate(ctx, db, good, "m", now); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := migrate(ctx, db, good, "m", now); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	if got := fmt.Sprint(versions()); got != "[1 2]" {
		t.Errorf("applied versions %s, want [1 2]", got)
	}
	err := migrate(ctx, db, bad, "m", now)
	if err == nil {
		t.Fatal("a failing migration returned nil")
	}
	if msg := err.Error(); !strings.Contains(msg, "0003_c.sql") {
		t.Errorf("error %q does not name the failed migration", msg)
	}
	if got := tables(); !got["a"] || !got["b"] || got["c"] {
		t.Errorf("tables after a failed migration %v, want a and b only", got)
	}
	if got := fmt.Sprint(versions()); got != "[1 2]" {
		t.Errorf("applied versions after a failed migration %s, want [1 2]", got)
	}

	for name, fsys := range map[string]fstest.MapFS{
		"unnumbered": {"m/init.sql": {Data: []byte("SELECT 1;")}},
		"duplicate":  {"m/0001_x.sql": {Data: []byte("SELECT 1;")}, "m/01_y.sql": {Data: []byte("SELECT 1;")}},
	} {
		if err := migrate(ctx, db, fsys, "m", now); err == nil {
			t.Errorf("%s migration names: migrate returned nil", name)
		}
	}
}

func TestTimeCodec(t *testing.T) {
	for _, tc := range []struct {
		in, want time.Time
	}{
		{time.Time{}, time.Time{}},
		{time.Unix(0, 0), time.Unix(0, 0).UTC()},
		{time.Date(2030, 1, 2, 3, 4, 5, 999_999_999, time.FixedZone("X", -7*3600)), time.Date(2030, 1, 2, 10, 4, 5, 999_999_000, time.UTC)},
		{time.Date(1960, 1, 1, 0, 0, 0, 1500, time.UTC), time.Date(1960, 1, 1, 0, 0, 0, 1000, time.UTC)},
	} {
		got := fromTm(tm(tc.in))
		if got != tc.want {
			t.Errorf("round trip of %v = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !(tm(time.Time{}) < tm(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))) {
		t.Error("the zero time does not sort before other times")
	}
}

// The writer's automatic checkpoint is only a safety threshold; a write
// transaction is followed by a PASSIVE checkpoint on the checkpointer's own
// connection, which copies the whole log back (nothing else reads here).
func TestWritesAreCheckpointedOffTheWriter(t *testing.T) {
	type result struct {
		busy, logFrames, done int
		err                   error
	}
	got := make(chan result, 16)
	s := open(t, filepath.Join(t.TempDir(), "ck.db"), Config{OnCheckpoint: func(busy, logFrames, done int, err error) {
		select {
		case got <- result{busy, logFrames, done, err}:
		default:
		}
	}})
	var pages int
	if err := s.DB().QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != walAutocheckpointPages {
		t.Errorf("writer wal_autocheckpoint = %d, want %d", pages, walAutocheckpointPages)
	}
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertAudit(ctx, dlq.AuditRecord{ID: "ck-1", At: time.Now(), Actor: "test", Action: "checkpoint", Outcome: "ok"})
	})
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.busy != 0 || r.logFrames == 0 || r.done != r.logFrames {
		t.Errorf("checkpoint after a write: busy=%d log=%d checkpointed=%d err=%v; want 0, > 0, all of them, nil",
			r.busy, r.logFrames, r.done, r.err)
	}
}

// The relay's claim reads its rows in index order: no statement of it sorts
// (a sort is O(backlog) per claim), and each reads the partial index of
// pending rows, outbox_due (as do the backlog gauges).
// EarliestPending reads the aggregates' open rows through the partial
// index of migration 0013, in its order (no sort), and an insert reads
// nothing.
func TestAggregateQueriesUseTheOpenRowsIndex(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "plan.db"), Config{})
	text := queryPlan(t, s.DB(), sprintfSQL(sqlEarliestPending, placeholders(2)), "pending", "dead", "order-events", "a", "b")
	if strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, "INDEX outbox_open_by_aggregate") {
		t.Errorf("earliest pending: plan %q, want a search of outbox_open_by_aggregate without a sort", text)
	}
	// The insert reads only the aggregate's open rows (whether one blocks).
	text = queryPlan(t, s.DB(), sqlInsertOutbox, "i", 0, "t", "a", "e", "d", nil, "{}", "pending", 0, 0, "", 0, "", 0, 0, 1, "a")
	if strings.Contains(text, "SCAN") || !strings.Contains(text, "INDEX outbox_open_by_aggregate") {
		t.Errorf("outbox insert: plan %q, want only a search of outbox_open_by_aggregate", text)
	}
	for name, q := range map[string]string{
		"promote heads":         sprintfSQL(sqlPromoteHeads, placeholders(2)),
		"promote heads of rows": sprintfSQL(sqlPromoteHeadsOfRows, placeholders(2)),
	} {
		text := queryPlan(t, s.DB(), q, "a", "b")
		if strings.Contains(text, "SCAN") || !strings.Contains(text, "INDEX outbox_open_by_aggregate") {
			t.Errorf("%s: plan %q, want searches of outbox_open_by_aggregate and the primary key, no scan", name, text)
		}
	}
}

// queryPlan returns SQLite's plan for query, its steps joined by "; ".
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("plan of %s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

func TestClaimQueriesReadInIndexOrder(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "plan.db"), Config{})
	for name, q := range map[string]struct {
		sql   string
		args  []any
		index string
	}{
		"due list of a shard": {sqlListOutboxDue, []any{0, 1, 1, 100}, "outbox_head_due"},
		"next shard in use":   {sqlNextPendingShard, []any{0}, "outbox_due"},
		"backlog count":       {sqlOutboxBacklogCount, nil, "outbox_due"},
		"backlog oldest":      {sqlOutboxBacklogOldest, nil, "outbox_due"},
	} {
		text := queryPlan(t, s.DB(), q.sql, q.args...)
		if strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text+" ", "INDEX "+q.index+" ") {
			t.Errorf("%s: plan %q, want a search of %s without a sort", name, text, q.index)
		}
	}
}
