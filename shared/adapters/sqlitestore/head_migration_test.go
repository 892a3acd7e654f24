package sqlitestore

import (
	"context"
	"database/sql"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"ordersaga/schema"
)

// Migration 0015 gives head = 1 to the first blocking row of every
// aggregate written before it (pending, or dead and bound for
// order-events; first by rowid) and to nothing else.
func TestHeadMigrationMarksEachAggregatesFirstBlockingRow(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	upTo := func(last string) fs.FS {
		files, err := fs.Glob(schema.SQLite, "sqlite/*.sql")
		if err != nil {
			t.Fatal(err)
		}
		m := fstest.MapFS{}
		for _, f := range files {
			if path.Base(f) <= last {
				b, _ := fs.ReadFile(schema.SQLite, f)
				m["sqlite/"+path.Base(f)] = &fstest.MapFile{Data: b}
			}
		}
		return m
	}
	now := func() time.Time { return time.Unix(0, 0) }
	if err := migrate(ctx, db, upTo("0014_~"), "sqlite", now); err != nil {
		t.Fatal(err)
	}
	// id, aggregate, destination, status, in write order.
	rows := [][4]string{
		{"a1", "a", "order-events", "published"},
		{"a2", "a", "order-events", "pending"}, // head
		{"a3", "a", "order-events", "pending"},
		{"b1", "b", "order-events", "dead"}, // head: a dead order event blocks
		{"b2", "b", "order-events", "pending"},
		{"c1", "c", "saga-commands", "dead"},    // blocks nothing
		{"c2", "c", "saga-commands", "pending"}, // head
		{"d1", "d", "order-events", "discarded"},
		{"e1", "e", "order-events", "pending"}, // head
	}
	for _, r := range rows {
		_, err := db.Exec(`INSERT INTO outbox (id, shard, aggregate_type, aggregate_id, event_type, destination,
			payload, metadata, status, attempts, next_attempt_at, lease_owner, lease_until, last_error, created_at,
			published_at, version) VALUES (?, 0, 'order', ?, 'x', ?, NULL, '{}', ?, 0, 0, '', 0, '', 0, 0, 1)`,
			r[0], r[1], r[2], r[3])
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, db, upTo("0015_~"), "sqlite", now); err != nil {
		t.Fatal(err)
	}
	got, err := db.Query(`SELECT id FROM outbox WHERE head = 1 ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	var heads []string
	for got.Next() {
		var id string
		if err := got.Scan(&id); err != nil {
			t.Fatal(err)
		}
		heads = append(heads, id)
	}
	if g, w := strings.Join(heads, " "), "a2 b1 c2 e1"; g != w {
		t.Errorf("heads after migration 0015 = %q, want %q", g, w)
	}
}
