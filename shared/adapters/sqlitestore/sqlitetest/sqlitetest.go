// Package sqlitetest holds test helpers over a SQLite database file of the
// local store: tests that prove bad input "changes nothing" compare the row
// counts of every table before and after.
package sqlitetest

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // the driver the store uses
)

// RowCounts returns the number of rows of every table in the database file
// at path (opened read-only), by table name.
func RowCounts(t testing.TB, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int, len(names))
	for _, n := range names {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}
